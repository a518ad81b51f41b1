/**
 * SVC_PUBLIC_URL and SVC_WORKSPACE_URL are bases that paths are appended to: another scheme, a
 * query, a fragment or credentials are refused at start, naming the setting, instead of being
 * handed out inside every decision link and console URL (`javascript:alert(1)/links/...`,
 * `https://gw/?a=1/#/tasks/...`) or sent with every workspace call. In process (every form) and on
 * the built process (the start-up line).
 */
import { describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { BASE_URL_EXPECTED } from "../../src/config/read.js"
import { tenantConfigFromEnv } from "../../src/config/TenantConfig.js"
import { embeddedSettings } from "../../src/workspace/embedded/layer.js"
import { describeStartFailure } from "../../src/http/server/failStart.js"
import { readEnv } from "../fixtures/config.js"
import { expectOneLineFailure } from "../ops/startFailureCases.js"
import { runUntilExit } from "../ops/builtRun.js"
import { freePort } from "../support/process.js"

const REFUSED = [
  "javascript:alert(1)",
  "ftp://gw.example.com",
  "file:///etc/passwd",
  "https://gw.example.com/?tenant=a",
  "https://gw.example.com/?",
  "https://gw.example.com/#",
  "https://gw.example.com/#/tasks",
  "https://user:secret@gw.example.com",
  "https://:secret@gw.example.com",
  "gw.example.com",
  "/relative",
  "https://",
  "http://exa mple.com"
]

const ACCEPTED: ReadonlyArray<readonly [string, string]> = [
  ["https://gw.example.com", "https://gw.example.com"],
  ["https://gw.example.com/", "https://gw.example.com"],
  ["https://gw.example.com/acme/", "https://gw.example.com/acme"],
  ["HTTP://GW.Example.COM:8080//", "http://gw.example.com:8080"],
  ["https://bücher.example", "https://xn--bcher-kva.example"],
  ["http://[::1]:3000", "http://[::1]:3000"]
]

/** Each setting as its reader gives it (an Option: unset is no link, or the embedded store). */
const readers = [
  { name: "SVC_PUBLIC_URL", read: (env: Record<string, string>) => Result.map(readEnv(embeddedSettings, env), (s) => s.explicitPublicUrl ?? Option.none()) },
  { name: "SVC_WORKSPACE_URL", read: (env: Record<string, string>) => Result.map(readEnv(tenantConfigFromEnv, env), (s) => s.workspaceUrl) }
] as const

describe("base URL settings", () => {
  for (const { name, read } of readers) {
    it.each(REFUSED)(`${name}=%j is refused at start, the line naming it and what it takes`, (value) => {
      const env = { [name]: value }
      const result = read(env)
      if (Result.isSuccess(result)) throw new Error(`${name}=${value} was taken: ${JSON.stringify(result.success)}`)
      // Credentials are said masked: the line goes to a log.
      const shown = value.replace(/^(https?:\/\/)([^/@:]*):[^/@]*@/, "$1$2:***@")
      const line = describeStartFailure(result.failure as never, env)
      expect(line).toBe(`${name}=${JSON.stringify(shown)}: ${BASE_URL_EXPECTED}`)
      expect(line).not.toContain("secret")
    })
  }

  it.each(ACCEPTED)("%j is taken as %j (no trailing slash: paths are appended)", (value, expected) => {
    for (const { name, read } of readers) {
      const result = read({ [name]: value })
      expect(Result.isSuccess(result) ? Option.getOrUndefined(result.success) : result.failure, name).toBe(expected)
    }
  })

  it("the built gateway refuses to start with SVC_PUBLIC_URL=javascript:...: exit 1, one line naming it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "base-url-"))
    try {
      const result = await runUntilExit({
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        SVC_ADMIN_PORT: "off",
        SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
        SVC_PUBLIC_URL: "javascript:alert(1)"
      })
      expectOneLineFailure(result, /^Cannot start: SVC_PUBLIC_URL="javascript:alert\(1\)": expected an http or https URL/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)
})
