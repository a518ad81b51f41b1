/**
 * `npm run workspace` is the same admin surface as the embedded admin listener: with
 * SVC_ADMIN_TOKEN set it answers 401 without the bearer token, and a gateway started with
 * SVC_WORKSPACE_URL reaches it only with SVC_WORKSPACE_TOKEN. The GL connect page stays open
 * to the browser holding the session link. Real processes on loopback ports.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startService, WORKSPACE_ENTRY } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const FIXTURE = fileURLToPath(new URL("../../fixtures/demo.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = randomBytes(24).toString("base64url")

let dir: string
let db: string
let workspace: RunningService
const running: Array<RunningService> = []

const startWorkspace = (env: Record<string, string>) =>
  startService({ SVC_DATABASE_URL: db, SVC_SEED_FILE: FIXTURE, ...env }, WORKSPACE_ENTRY, "SVC_WORKSPACE_PORT")

const startGateway = async (env: Record<string, string>) => {
  const gw = await startService({ SVC_WORKSPACE_URL: workspace.url, SVC_TENANT_SLUG: "acme", SVC_WORKSPACE_RETRIES: "0", ...env })
  running.push(gw)
  return gw
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-standalone-"))
  db = pathToFileURL(join(dir, "workspace.db")).href
  workspace = await startWorkspace({ SVC_ADMIN_TOKEN: TOKEN })
  running.push(workspace)
}, 60_000)

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("the standalone workspace service with SVC_ADMIN_TOKEN", { timeout: 120_000 }, () => {
  it("answers 401 without the token, on the API, its OpenAPI document and docs page; 200 with it", async () => {
    expect(workspace.output()).toContain("Authorization: Bearer <SVC_ADMIN_TOKEN> required")
    for (const path of ["/workspace/tenants/by-slug/globex", "/workspace/openapi.json", "/workspace/docs", "/workspace/registry/agents"]) {
      const none = await http("GET", `${workspace.url}${path}`)
      expect(none.status, path).toBe(401)
      expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/)
      expect(none.body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.any(String) })
      expect((await http("GET", `${workspace.url}${path}`, undefined, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401)
      expect((await http("GET", `${workspace.url}${path}`, undefined, { authorization: `Bearer ${TOKEN}` })).status, path).toBe(200)
    }
  })

  it("a gateway reaches it with SVC_WORKSPACE_TOKEN, and not without (502)", async () => {
    const [good, none, wrong] = await Promise.all([
      startGateway({ SVC_WORKSPACE_TOKEN: TOKEN }),
      startGateway({}),
      startGateway({ SVC_WORKSPACE_TOKEN: `${TOKEN.slice(0, -1)}_` })
    ])
    // The start-up line follows the port's opening: on a busy machine, after the first probe.
    await waitFor("the start-up line naming the workspace service", () => good.output().includes("workspace service at"), {
      timeoutMs: 10_000,
      everyMs: 50,
      seen: good.output
    })
    expect(good.output()).toContain(`workspace service at ${workspace.url}`)
    const entities = await http("GET", `${good.url}/v1/entities`)
    expect(entities.status).toBe(200)
    expect(entities.body.map((e: any) => e.id)).toContain(ACME_US)
    for (const gw of [none, wrong]) {
      const res = await http("GET", `${gw.url}/v1/entities`)
      expect(res.status).toBe(502)
      expect(res.body).toMatchObject({ statusCode: 502, error: "Bad Gateway" })
      expect(res.body.message).toContain("401")
      // Health needs no tenant binding and no workspace.
      expect((await http("GET", `${gw.url}/v1/health`)).status).toBe(200)
    }

    // GL connect: the session link points at the workspace service, whose page needs no token.
    const session = await http("POST", `${good.url}/v1/gl/connect/session`, { serviceId: "xero" })
    expect(session.status).toBe(200)
    expect(session.body.sessionUrl).toBe(`${workspace.url}/workspace/gl/connect/${session.body.consumerId}`)
    const page = await fetch(session.body.sessionUrl)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`value="xero" checked`)
    const bad = await http("POST", `${session.body.sessionUrl}/complete`, { service: "nope" })
    expect(bad.status).toBe(400)
    expect((await http("POST", `${session.body.sessionUrl}/complete`, { service: "xero" })).status).toBe(204)
    expect((await http("GET", `${good.url}/v1/gl/status`)).body).toMatchObject({ connected: true, service: "xero" })
    expect((await http("GET", session.body.sessionUrl)).status).toBe(404)
  })

  it("refuses to start on a non-loopback HOST without SVC_ADMIN_TOKEN", async () => {
    await expect(startWorkspace({ HOST: "0.0.0.0" })).rejects.toThrow(/HOST=0\.0\.0\.0 is not a loopback address.*SVC_ADMIN_TOKEN/)
  })
})
