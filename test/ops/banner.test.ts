/**
 * The start-up banner names where the console is and which identity mode is on, so an operator
 * knows from the first lines whether the gateway names who acts.
 */
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../support/process.js"
import { killAllBuilt, spawnBuilt } from "./builtRun.js"

const dirs: Array<string> = []
afterAll(() => {
  killAllBuilt()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The banner of a gateway started with `env` (it is stopped once the banner is out). */
const banner = async (env: Record<string, string>): Promise<string> => {
  const dir = mkdtempSync(join(tmpdir(), "banner-"))
  dirs.push(dir)
  const port = await freePort()
  const run = spawnBuilt({
    PORT: String(port),
    HOST: "127.0.0.1",
    SVC_ADMIN_PORT: "off",
    SVC_LOG_FORMAT: "json",
    SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
    ...env
  })
  try {
    const deadline = Date.now() + 30_000
    for (;;) {
      const line = run.output().split("\n").find((l) => l.includes("tenant gateway listening on"))
      if (line !== undefined) return (JSON.parse(line) as { msg: string }).msg.replaceAll(String(port), "PORT")
      if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
      if (Date.now() > deadline) throw new Error(`no banner:\n${run.output()}`)
      await new Promise((r) => setTimeout(r, 50))
    }
  } finally {
    run.child.kill("SIGTERM")
    await run.exited
  }
}

describe("start-up banner", { timeout: 90_000 }, () => {
  it("names the console's URL and says identity is off by default", async () => {
    const text = await banner({})
    expect(text).toContain("\n  console:   http://127.0.0.1:PORT/\n")
    expect(text).toContain(
      "\n  identity:  off: nobody is named and claims are refused (set SVC_ACTOR_HEADER or SVC_JWT_JWKS)\n"
    )
  })

  it("names the actor header when the proxy in front names who acts", async () => {
    const text = await banner({ SVC_ACTOR_HEADER: "X-Forwarded-Email", SVC_GROUPS_HEADER: "x-forwarded-groups" })
    expect(text).toContain(
      "\n  identity:  the actor header x-forwarded-email (SVC_ACTOR_HEADER), set by the proxy in front; " +
        "writes without it answer 401; groups in x-forwarded-groups\n"
    )
  })

  it("names the key set, issuer and claim of bearer JWTs, a value with a line break quoted", async () => {
    const dir = mkdtempSync(join(tmpdir(), "banner-jwks-"))
    dirs.push(dir)
    const jwks = join(dir, "jwks.json")
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" })
    writeFileSync(jwks, JSON.stringify({ keys: [{ ...publicKey.export({ format: "jwk" }), kid: "k1", alg: "ES256", use: "sig" }] }))
    const text = await banner({
      SVC_JWT_JWKS: jwks,
      SVC_JWT_ISSUER: "https://issuer.test\n  admin:     fake",
      SVC_JWT_AUDIENCE: "gateway",
      SVC_JWT_TENANT_CLAIM: "tenant"
    })
    expect(text).toContain(
      `\n  identity:  bearer JWTs (SVC_JWT_JWKS ${jwks}, issuer "https://issuer.test\\n  admin:     fake"); ` +
        "the actor is claim sub, the tenant claim tenant\n"
    )
    expect(text.split("\n").filter((l) => l.startsWith("  admin:"))).toEqual(["  admin:     off (SVC_ADMIN_PORT=off)"])
  })
})
