/**
 * Vitest global set-up: builds what the real processes of the tests run, once per run, before
 * any test starts one: the gateway (dist/, what `npm start` runs; test/support/process.ts's
 * startBuilt) and the task console it serves (dist/console), each only when stale (a few stat
 * calls when fresh).
 */
import { runBuild } from "../../scripts/build.mjs"
import { buildConsole } from "../../scripts/build-console.mjs"
import { consoleStaleness, staleness } from "../../scripts/build-if-stale.mjs"

export default async () => {
  if (staleness() !== undefined) await runBuild()
  else if (consoleStaleness() !== undefined) await buildConsole()
}
