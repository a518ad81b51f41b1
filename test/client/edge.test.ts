/**
 * README "Authentication and the edge": the gateway side of its oauth2-proxy example, started
 * (built, as `npm start` runs it) with exactly the settings the README gives, and called with the
 * typed client as a request through the proxy (the actor header set) and one around it (none):
 * writes name the actor or are refused, reads and the proxy's unauthenticated routes (probes,
 * metrics, /mcp) answer as the README says, each with the credential the gateway checks itself.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createGatewayClient, Unauthorized } from "../../src/client/index.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** The settings of the README's gateway command in "Example: oauth2-proxy in front". */
const readmeGatewaySettings = (): Record<string, string> => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("### Example: oauth2-proxy in front"))
  const block = /```sh\n# The gateway[^\n]*\n([\s\S]*?)\n```/.exec(section)
  if (block === null) throw new Error("README.md has no gateway command in its oauth2-proxy example")
  const settings: Record<string, string> = {}
  for (const m of block[1]!.matchAll(/\b([A-Z][A-Z0-9_]*)=(\S+)/g)) settings[m[1]!] = m[2]!
  expect(block[1]).toMatch(/npm start\s*$/)
  return settings
}

describe("the README's gateway behind oauth2-proxy", { timeout: 60_000 }, () => {
  let gw: RunningService
  let dir = ""
  let settings: Record<string, string>
  let header = ""

  beforeAll(async () => {
    settings = readmeGatewaySettings()
    header = settings.SVC_ACTOR_HEADER!
    dir = mkdtempSync(join(tmpdir(), "svc-edge-"))
    // HOST and PORT: the test's own loopback port (startBuilt), as the README's loopback one.
    const { HOST, PORT, ...env } = settings
    expect(HOST).toBe("127.0.0.1")
    gw = await startBuilt({ ...env, SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}` })
  }, 60_000)

  afterAll(async () => {
    await gw?.stop()
    if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("names the actor of a write from oauth2-proxy's header, and refuses one without it", async () => {
    expect(header).toBe("x-forwarded-email")
    const around = createGatewayClient(gw.url)
    const error = await around.gl.glConnectSession({ payload: {} }).then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(Unauthorized)
    expect((error as Unauthorized).message).toContain(header)

    const through = createGatewayClient(gw.url, { headers: { [header]: "jane@example.com" } })
    await through.gl.glConnectSession({ payload: {} })
    await waitFor("the audit line naming jane@example.com", () => /"audit".*jane@example\.com|jane@example\.com.*"audit"/.test(gw.output()), {
      timeoutMs: 5_000,
      everyMs: 50
    })
    expect(gw.output()).toMatch(/"audit".*jane@example\.com|jane@example\.com.*"audit"/)
  })

  it("serves reads unnamed, and the proxy's unauthenticated routes with the gateway's own checks", async () => {
    expect((await createGatewayClient(gw.url).entities.listEntities()).length).toBeGreaterThan(0)
    expect((await http("GET", `${gw.url}/v1/health`)).status).toBe(200)
    expect((await http("GET", `${gw.url}/readyz`)).status).toBe(200)
    expect((await http("GET", `${gw.url}/metrics`)).status).toBe(401)
    const metrics = await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${settings.SVC_METRICS_TOKEN}` } })
    expect(metrics.status).toBe(200)
    await metrics.body?.cancel()
    const mcp = await http("POST", `${gw.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" }, {
      accept: "application/json, text/event-stream",
      [header]: "jane@example.com"
    })
    expect(mcp.status).toBe(401)
    expect(mcp.headers.get("www-authenticate")).toMatch(/^Bearer/)
  })
})
