/**
 * Vitest global set-up: builds what the real processes of the tests run, once per run, before
 * any test starts one: the gateway (dist/, what `npm start` runs; test/support/process.ts's
 * startBuilt) and the task console it serves (dist/console), each only when stale (a few stat
 * calls when fresh).
 *
 * And one Chromium for the run's browser tests (./browser.ts: each file's `launch()` is a
 * context of it), unless the run names only files that use no browser (`npx vitest run
 * test/gateway/x.test.ts` starts none). Stopped after the run.
 */
import { existsSync, readFileSync } from "node:fs"
import type { TestProject } from "vitest/node"
import { runBuild } from "../../scripts/build.mjs"
import { buildConsole } from "../../scripts/build-console.mjs"
import { consoleStaleness, staleness } from "../../scripts/build-if-stale.mjs"
import { launchShared } from "./browser.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** ws://... of the run's Chromium ("" when the run selected no browser test). */
    chromiumEndpoint: string
  }
}

/** The file filters on the command line, when every one names a file that does not use ./browser.ts. */
const selectsNoBrowserFile = () => {
  const run = process.argv.indexOf("run")
  const filters = process.argv.slice(run === -1 ? 2 : run + 1).filter((a) => !a.startsWith("-") && /test|\.ts$/.test(a))
  return filters.length > 0 &&
    filters.every((f) => f.endsWith(".test.ts") && existsSync(f) && !readFileSync(f, "utf8").includes("/browser.js\""))
}

export default async function setup(project: TestProject) {
  // Chromium starts while the build runs. Should it fail to start, files launch their own and
  // the first says why (no chromium installed, say).
  const starting = selectsNoBrowserFile() ? undefined : launchShared().catch(() => undefined)
  try {
    if (staleness() !== undefined) await runBuild()
    else if (consoleStaleness() !== undefined) await buildConsole()
  } catch (e) {
    await (await starting)?.close()
    throw e
  }
  const server = await starting
  project.provide("chromiumEndpoint", server?.wsEndpoint() ?? "")
  return async () => {
    await server?.close()
  }
}
