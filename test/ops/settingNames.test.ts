/**
 * A misspelt SVC_* setting is reported at start with the closest known name; the declarations
 * (src/config/settings.ts) name every setting the sources read, and `.env.example` and the
 * README's settings tables are what `npm run settings:gen` writes from them.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { SETTINGS } from "../../src/config/settings.js"
import { renderEnvExample, renderReadme } from "../../src/config/settingsDocs.js"
import { KNOWN_SETTINGS, unknownSettingWarnings } from "../../src/config/unknownSettings.js"
import { freePort } from "../support/process.js"
import { killAllBuilt, spawnBuilt } from "./builtRun.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const NAME = /\bSVC_[A-Z0-9_]*[A-Z0-9]\b/g

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : /\.(ts|tsx|mjs|js)$/.test(entry.name) ? [join(dir, entry.name)] : []
  )

const sorted = (names: Iterable<string>) => [...new Set(names)].sort()

afterAll(killAllBuilt)

describe("unknown SVC_* settings", () => {
  it("each is one warning naming the closest known setting; known names and other variables are not", () => {
    expect(unknownSettingWarnings({
      SVC_MAX_BODY_BYTE: "100",
      SVC_TENANT_SLUG: "acme",
      SVC_ADMN_PORT: "0",
      SVC_COMPLETELY_DIFFERENT_THING: "1",
      PORT: "3000",
      SVCX_OTHER: "1"
    })).toEqual([
      "SVC_ADMN_PORT is not a setting of this gateway and is ignored: did you mean SVC_ADMIN_PORT?",
      expect.stringMatching(/^SVC_COMPLETELY_DIFFERENT_THING is not a setting of this gateway and is ignored: the closest is SVC_\w+; every setting is in \.env\.example$/),
      "SVC_MAX_BODY_BYTE is not a setting of this gateway and is ignored: did you mean SVC_MAX_BODY_BYTES?"
    ])
    expect(unknownSettingWarnings(Object.fromEntries(KNOWN_SETTINGS.map((n) => [n, "x"])))).toEqual([])
  })

  it("the declarations name exactly the SVC_* settings the sources read, once each", () => {
    const own = [join(ROOT, "src", "config", "settings.ts"), join(ROOT, "src", "config", "unknownSettings.ts")]
    const inSource = sorted(
      sourceFiles(join(ROOT, "src")).filter((f) => !own.includes(f)).flatMap((f) => readFileSync(f, "utf8").match(NAME) ?? [])
    )
    const names = SETTINGS.map((s) => s.name)
    expect(sorted(names)).toHaveLength(names.length)
    const known = sorted(KNOWN_SETTINGS)
    expect({ missingFromDeclarations: inSource.filter((n) => !known.includes(n)), notInSource: known.filter((n) => !inSource.includes(n)) })
      .toEqual({ missingFromDeclarations: [], notInSource: [] })
    // The OpenTelemetry settings the export reads are declared too (they are no SVC_* setting).
    const otel = sorted(
      sourceFiles(join(ROOT, "src")).filter((f) => !own.includes(f)).flatMap((f) => readFileSync(f, "utf8").match(/\bOTEL_[A-Z0-9_]*[A-Z0-9]\b/g) ?? [])
    )
    expect(otel.filter((n) => !names.includes(n as never))).toEqual([])
  })

  it(".env.example and the README's settings tables are as npm run settings:gen writes them", () => {
    const hint = "run npm run settings:gen after changing src/config/settings.ts"
    expect(readFileSync(join(ROOT, ".env.example"), "utf8"), hint).toBe(renderEnvExample())
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    expect(readme, hint).toBe(renderReadme(readme))
  })

  it("the built process warns at start and serves", { timeout: 60_000 }, async () => {
    const port = await freePort()
    const run = spawnBuilt({
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_ADMIN_PORT: "off",
      SVC_LOG_FORMAT: "json",
      SVC_DATABASE_URL: `file:${join(ROOT, "scratch", `settingnames-${process.pid}`, "workspace.db")}`,
      SVC_MAX_BODY_BYTE: "100"
    })
    try {
      const deadline = Date.now() + 30_000
      while (!(await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false))) {
        if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
        if (Date.now() > deadline) throw new Error(`not healthy:\n${run.output()}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      const warning = run.output().split("\n").filter((l) => l.includes("SVC_MAX_BODY_BYTE "))
      expect(warning).toHaveLength(1)
      expect(JSON.parse(warning[0]!)).toMatchObject({
        level: "warn",
        msg: "SVC_MAX_BODY_BYTE is not a setting of this gateway and is ignored: did you mean SVC_MAX_BODY_BYTES?"
      })
    } finally {
      run.child.kill("SIGTERM")
      await run.exited
      rmSync(join(ROOT, "scratch", `settingnames-${process.pid}`), { recursive: true, force: true })
    }
  })
})
