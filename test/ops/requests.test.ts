/**
 * One structured line per request (id, method, route template, status, duration,
 * bytes); x-request-id accepted from the edge or generated, echoed, and sent on every call to
 * the upstream workspace together with the caller's traceparent.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HttpWorkspaceClientLive } from "../../src/workspace/http/client.js"
import { eventually, type OpsGateway, startOps } from "./support.js"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const TASK = "00000000-0000-4000-8000-000000000000"

describe("request ids and request lines", () => {
  let gw: OpsGateway
  beforeAll(async () => {
    gw = await startOps()
  })
  afterAll(() => gw.close())

  const lineFor = (id: string) => eventually(() => gw.lines().find((l) => l.requestId === id))

  it("keeps a valid edge id, echoes it, and logs one line with the route template", async () => {
    const res = await fetch(`${gw.url}/v1/tasks/${TASK}/ui`, { headers: { "x-request-id": "edge-42.abc" } })
    expect(res.headers.get("x-request-id")).toBe("edge-42.abc")
    const body = await res.text()
    const line = await lineFor("edge-42.abc")
    expect(line).toMatchObject({
      level: "info",
      msg: "request",
      method: "GET",
      route: "/v1/tasks/:taskId/ui",
      path: `/v1/tasks/${TASK}/ui`,
      status: res.status,
      bytes: Buffer.byteLength(body)
    })
    expect(typeof line.durationMs).toBe("number")
    expect(typeof line.time).toBe("string")
  })

  it("replaces an id that is too long or not visible ASCII with a UUID", async () => {
    for (const bad of ["x".repeat(129), "has space", "tab\there", "é"]) {
      const res = await fetch(`${gw.url}/v1/health`, { headers: { "x-request-id": encodeURI(bad) === bad ? bad : "x y" } })
      expect(res.headers.get("x-request-id")).toMatch(UUID)
    }
    const res = await fetch(`${gw.url}/v1/health`)
    const id = res.headers.get("x-request-id")!
    expect(id).toMatch(UUID)
    expect(await lineFor(id)).toMatchObject({ route: "/v1/health", status: 200, bytes: 15 })
  })

  it("logs requests no route took with route null, and errors in the same line shape", async () => {
    const res = await fetch(`${gw.url}/nowhere?secret=1`, { headers: { "x-request-id": "unrouted-1" } })
    expect(res.status).toBe(404)
    const line = await lineFor("unrouted-1")
    expect(line).toMatchObject({ route: null, path: "/nowhere", status: 404 })
    expect(JSON.stringify(line)).not.toContain("secret")
  })

  it("writes no info lines at SVC_LOG_LEVEL=warning", async () => {
    const quiet = await startOps({ logLevel: "Warn" })
    try {
      const res = await fetch(`${quiet.url}/v1/health`)
      await res.text()
      await new Promise((r) => setTimeout(r, 100))
      expect(quiet.lines()).toEqual([])
    } finally {
      await quiet.close()
    }
  })
})

describe("the upstream workspace sees the request's id and trace context", () => {
  let upstream: Server
  let gw: OpsGateway
  const seen: Array<IncomingHttpHeaders> = []
  beforeAll(async () => {
    upstream = createServer((req, res) => {
      seen.push(req.headers)
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ statusCode: 404, message: "no such tenant", error: "Not Found" }))
    })
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r))
    const port = (upstream.address() as { port: number }).port
    gw = await startOps({
      workspace: HttpWorkspaceClientLive(`http://127.0.0.1:${port}`, { timeoutMs: 2000, retries: 0 })
    })
  })
  afterAll(async () => {
    await gw.close()
    await new Promise((r) => upstream.close(r))
  })

  it("sends x-request-id (edge or generated) and passes traceparent / tracestate on", async () => {
    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    seen.length = 0
    const res = await fetch(`${gw.url}/v1/entities`, {
      headers: { "x-request-id": "from-the-edge", traceparent, tracestate: "vendor=1" }
    })
    await res.text()
    expect(seen.length).toBeGreaterThan(0)
    for (const h of seen) {
      expect(h["x-request-id"]).toBe("from-the-edge")
      expect(h["traceparent"]).toBe(traceparent)
      expect(h["tracestate"]).toBe("vendor=1")
    }
    expect(await eventually(() => gw.lines().find((l) => l.requestId === "from-the-edge"))).toMatchObject({
      traceId: "0af7651916cd43dd8448eb211c80319c"
    })

    seen.length = 0
    const res2 = await fetch(`${gw.url}/v1/entities`, { headers: { traceparent: "00-zz-bad" } })
    await res2.text()
    const generated = res2.headers.get("x-request-id")
    expect(generated).toMatch(UUID)
    expect(seen.length).toBeGreaterThan(0)
    for (const h of seen) {
      expect(h["x-request-id"]).toBe(generated)
      expect(h["traceparent"]).toBeUndefined()
    }
  })
})
