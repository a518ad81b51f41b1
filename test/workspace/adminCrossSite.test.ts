/**
 * The admin listener (every tenant's workspace API, served by the gateway on SVC_ADMIN_PORT)
 * is for servers and the CLI, never for browser pages: a write carrying a browser's marks of
 * another site (Sec-Fetch-Site, or an Origin / Referer of another host) is refused 403 in the
 * error shape and changes nothing, whatever its body (a field-less form post has none), while
 * the same request without them (curl, the CLI, the typed client) still works. Raw requests to
 * the built process, no admin token (the default on loopback).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pathToFileURL } from "node:url"
import { type RunningService, startBuilt, startService, WORKSPACE_ENTRY } from "../support/process.js"
import { type NodeResponse, requestTo } from "../http/support.js"

const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
const ROW = "0349944d-fb03-40cf-a73a-21b10c2a61e9" // expenses, NEEDS_ATTENTION
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const EVIL = "https://evil.example"
const FORM = { "content-type": "application/x-www-form-urlencoded", "content-length": "0" }

let dir = ""
let gw: RunningService | undefined
let admin = 0
let ownHost = ""

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "admin-cross-site-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "0" })
  admin = Number(new URL(gw.adminUrl).port)
  ownHost = `http://127.0.0.1:${admin}`
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const send = (method: string, path: string, headers: Record<string, string>, body?: string) =>
  requestTo(admin, method, path, { headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) }, ...(body === undefined ? {} : { body }) })

const expectForbidden = (res: NodeResponse, what: string) => {
  expect(res.status, `${what}: ${res.text}`).toBe(403)
  expect(Object.keys(res.body).sort()).toEqual(["error", "message", "statusCode"])
  expect(res.body).toMatchObject({ statusCode: 403, error: "Forbidden" })
  expect(res.body.message).toMatch(/^Cross-site write refused/)
}

const reject = `/workspace/tenants/${ACME}/subledgers/expenses/${ROW}/reject`

describe("the admin listener and writes from web pages", { timeout: 30_000 }, () => {
  it("refuses a field-less form post from another site, by fetch metadata, Origin or Referer; the row is unchanged", async () => {
    const marks: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["Sec-Fetch-Site: cross-site", { "sec-fetch-site": "cross-site", origin: EVIL }],
      ["Sec-Fetch-Site: same-site", { "sec-fetch-site": "same-site", origin: "http://127.0.0.1:1" }],
      ["a foreign Origin, no fetch metadata", { origin: EVIL }],
      ["Origin: null (a sandboxed frame)", { origin: "null" }],
      ["a foreign Referer, no Origin", { referer: `${EVIL}/page` }]
    ]
    for (const [what, headers] of marks) expectForbidden(await send("POST", reject, { ...FORM, ...headers }), what)
    // Other writes a page could aim at: the GL connection, a row edit, the agent registry.
    const cross = { "sec-fetch-site": "cross-site", origin: EVIL }
    expectForbidden(await send("DELETE", `/workspace/tenants/${ACME}/gl`, cross), "delete GL")
    expectForbidden(
      await send("PATCH", `/workspace/tenants/${ACME}/subledgers/expenses/${ROW}`, { ...cross, "content-type": "text/plain" }, JSON.stringify({ field: "merchant", value: "Evil" })),
      "edit a row"
    )
    expectForbidden(
      await send("POST", "/workspace/registry/agents", { ...cross, "content-type": "text/plain" }, JSON.stringify({ tenantId: ACME, name: "evil", kind: "custom", externalRef: "x" })),
      "register an agent"
    )
    // Nothing changed: the GL is still connected, and the row can still be rejected, once.
    const gl = await send("GET", `/workspace/tenants/${ACME}/gl`, {})
    expect(gl.status, gl.text).toBe(200)
    expect(gl.body).toMatchObject({ connection: { tenantId: ACME } })
    const cli = await send("POST", reject, {})
    expect(cli.status, cli.text).toBe(200)
    expect(cli.body).toMatchObject({ rowId: ROW, newStatus: "REJECTED" })
  })

  it("still serves servers and the CLI (no browser headers), same-origin pages, and reads from anywhere", async () => {
    const task = `/workspace/tenants/${ACME}/tasks/${REVIEW_TASK}/next-step`
    expect((await send("GET", task, { "sec-fetch-site": "cross-site", origin: EVIL })).status).toBe(200)
    const own = await send("POST", `/workspace/tenants/${ACME}/gl/sessions`, {
      "content-type": "application/json",
      "sec-fetch-site": "same-origin",
      origin: ownHost
    }, "{}")
    expect(own.status, own.text).toBe(201)
    const ownByOrigin = await send("POST", `/workspace/tenants/${ACME}/gl/sessions`, { "content-type": "application/json", origin: ownHost }, "{}")
    expect(ownByOrigin.status, ownByOrigin.text).toBe(201)
    const plain = await send("POST", `/workspace/tenants/${ACME}/gl/sessions`, { "content-type": "application/json" }, "{}")
    expect(plain.status, plain.text).toBe(201)
  })
})

describe("npm run workspace (the standalone service), same rule", { timeout: 60_000 }, () => {
  let ws: RunningService | undefined
  let port = 0
  beforeAll(async () => {
    ws = await startService(
      { SVC_DATABASE_URL: pathToFileURL(join(dir, "standalone.db")).href },
      WORKSPACE_ENTRY,
      "SVC_WORKSPACE_PORT"
    )
    port = Number(new URL(ws.url).port)
  }, 60_000)
  afterAll(async () => {
    await ws?.stop()
  })
  const to = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    requestTo(port, method, path, { headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) }, ...(body === undefined ? {} : { body }) })

  it("refuses cross-site writes on its API and on the connect page's completion; its own page completes", async () => {
    expectForbidden(await to("POST", reject, { ...FORM, "sec-fetch-site": "cross-site", origin: EVIL }), "reject")
    const session = await to("POST", `/workspace/tenants/${ACME}/gl/sessions`, { "content-type": "application/json" }, JSON.stringify({ serviceId: "xero" }))
    expect(session.status, session.text).toBe(201)
    const complete = `/workspace/gl/connect/${session.body.consumerId}/complete`
    const body = JSON.stringify({ service: "xero" })
    const before = (await to("GET", `/workspace/tenants/${ACME}/gl`, {})).body
    expectForbidden(await to("POST", complete, { "content-type": "text/plain", "sec-fetch-site": "cross-site", origin: EVIL }, body), "complete")
    expectForbidden(await to("POST", complete, { "content-type": "text/plain", origin: EVIL }, body), "complete by Origin")
    expect((await to("GET", `/workspace/tenants/${ACME}/gl`, {})).body).toEqual(before)
    const own = await to("POST", complete, { "content-type": "application/json", "sec-fetch-site": "same-origin", origin: ws!.url }, body)
    expect(own.status, own.text).toBe(204)
    expect((await to("GET", `/workspace/tenants/${ACME}/gl`, {})).body).toMatchObject({ connection: { service: "xero", status: "ACTIVE" } })
  })

  it("its connect page: HEAD as GET, any other method a 405 with Allow, paths spelt as the router reads them", async () => {
    const session = await to("POST", `/workspace/tenants/${ACME}/gl/sessions`, { "content-type": "application/json" }, JSON.stringify({ serviceId: "xero" }))
    expect(session.status, session.text).toBe(201)
    const id = session.body.consumerId as string
    for (const page of [`/workspace/gl/connect/${id}`, `//Workspace/GL/connect/${id}/`]) {
      expect((await to("GET", page, {})).status, page).toBe(200)
      const head = await to("HEAD", page, {})
      expect(head.status, page).toBe(200)
      expect(head.text).toBe("")
      for (const method of ["PUT", "DELETE", "PATCH", "POST"]) {
        const res = await to(method, page, { "content-type": "application/json" }, "[")
        expect(res.status, `${method} ${page}`).toBe(405)
        expect(res.headers["allow"]).toBe("GET, HEAD")
      }
    }
    for (const method of ["GET", "PUT", "DELETE"]) {
      const res = await to(method, `/workspace/gl/connect/${id}/complete`, {})
      expect(res.status, method).toBe(405)
      expect(res.headers["allow"]).toBe("POST")
    }
    // Still open: nothing above completed it.
    expect((await to("GET", `/workspace/gl/connect/${id}`, {})).status).toBe(200)
    // A documents path no route has: the router's 404, not the documents' 415.
    const nowhere = await to("POST", "/workspace/nothing/documents", { "content-type": "application/json" }, "{}")
    expect(nowhere.status, nowhere.text).toBe(404)
  })
})
