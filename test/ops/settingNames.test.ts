/**
 * A misspelt SVC_* setting is reported at start with the closest known name (issue 24: it was
 * ignored without a word), and the list of known names (src/settingNames.ts) agrees with what
 * declares and documents the settings: the SVC_* names in src/, `.env.example` and the README.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { KNOWN_SETTINGS, unknownSettingWarnings } from "../../src/settingNames.js"
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

  it("the known names are exactly the SVC_* names of src/, of .env.example and of the README", () => {
    const own = join(ROOT, "src", "settingNames.ts")
    const inSource = sorted(
      sourceFiles(join(ROOT, "src")).filter((f) => f !== own).flatMap((f) => readFileSync(f, "utf8").match(NAME) ?? [])
    )
    const example = readFileSync(join(ROOT, ".env.example"), "utf8")
    const inExample = sorted([...example.matchAll(/^# ?(SVC_[A-Z0-9_]+)=/gm)].map((m) => m[1]!))
    const inReadme = sorted([...readFileSync(join(ROOT, "README.md"), "utf8").matchAll(/`(SVC_[A-Z0-9_]+)`/g)].map((m) => m[1]!))
    const known = sorted(KNOWN_SETTINGS)
    expect(known).toEqual(KNOWN_SETTINGS)
    expect({ missingFromList: inSource.filter((n) => !known.includes(n)), notInSource: known.filter((n) => !inSource.includes(n)) })
      .toEqual({ missingFromList: [], notInSource: [] })
    expect({ missingFromEnvExample: known.filter((n) => !inExample.includes(n)), unknownInEnvExample: inExample.filter((n) => !known.includes(n)) })
      .toEqual({ missingFromEnvExample: [], unknownInEnvExample: [] })
    expect({ missingFromReadme: known.filter((n) => !inReadme.includes(n)), unknownInReadme: inReadme.filter((n) => !known.includes(n)) })
      .toEqual({ missingFromReadme: [], unknownInReadme: [] })
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
