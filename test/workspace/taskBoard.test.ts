/**
 * The task list of a gateway on a remote workspace (SVC_WORKSPACE_URL), on built processes: a
 * gateway with its embedded store serves the workspace API on its admin listener, a recording
 * proxy sits in front of it, and the gateway under test reads through the proxy.
 *
 * - One upstream round trip per list (the board: entity, tasks and each task's `awaiting`), with
 *   or without the paging and filter parameters; the answer is the embedded gateway's own.
 * - A missing entity is the spec's 404; answers that break the contract are the spec's 502.
 * - Against a workspace service without the board endpoint (404, as an older version answers),
 *   the list is the same, composed from the separate calls with the entity and the tasks asked
 *   at once; after the first such list the board is not asked again.
 */
import { mkdtempSync, rmSync } from "node:fs"
import * as nodeHttp from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME, ACME_UK, ACME_US, GLOBEX_US } from "../support/world.js"

const TOKEN = "task-board-admin-token-0123456789abcdef"

interface Call {
  readonly method: string
  readonly path: string
  readonly arrived: number
  answered?: number
}

/** What the proxy does with a request instead of forwarding it at once. */
type Rule = (method: string, path: string) =>
  | undefined
  | { readonly delayMs: number }
  | { readonly status: number; readonly body: string; readonly contentType?: string }

interface RecordingProxy {
  readonly url: string
  readonly calls: Array<Call>
  rule: Rule
  readonly close: () => Promise<void>
}

/** An HTTP proxy in front of `target` that records every request and may answer or hold some itself. */
const startRecordingProxy = async (target: string): Promise<RecordingProxy> => {
  const upstream = new URL(target)
  const agent = new nodeHttp.Agent({ keepAlive: true })
  const calls: Array<Call> = []
  const proxy: RecordingProxy = { url: "", calls, rule: () => undefined, close: async () => {} }
  const server = nodeHttp.createServer((req, res) => {
    const call: Call = { method: req.method ?? "", path: req.url ?? "", arrived: performance.now() }
    calls.push(call)
    res.on("finish", () => (call.answered = performance.now()))
    const ruled = proxy.rule(call.method, call.path)
    if (ruled !== undefined && "status" in ruled) {
      req.resume()
      res.writeHead(ruled.status, { "content-type": ruled.contentType ?? "application/json" })
      res.end(ruled.body)
      return
    }
    const forward = () => {
      const out = nodeHttp.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      out.on("error", () => res.destroy())
      req.pipe(out)
    }
    if (ruled !== undefined) setTimeout(forward, ruled.delayMs)
    else forward()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        agent.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  })
}

/** The calls of `proxy` as "METHOD path-after-the-tenant", query left out. */
const named = (calls: ReadonlyArray<Call>) =>
  calls.map((c) => `${c.method} ${c.path.replace(`/workspace/tenants/${ACME}`, "").replace(/\?.*$/, "")}`)

let dir: string
let upstream: RunningService
let proxy: RecordingProxy
let gateway: RunningService
let oldProxy: RecordingProxy
let oldGateway: RunningService

/** The list the embedded gateway itself answers: what the remote one must answer too. */
const ownList = async (entityId: string, query = "") => {
  const answer = await http("GET", `${upstream.url}/v1/entities/${entityId}/tasks${query}`)
  expect(answer.status, answer.text).toBe(200)
  return answer
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "task-board-"))
  upstream = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_ADMIN_TOKEN: TOKEN })
  proxy = await startRecordingProxy(upstream.adminUrl)
  oldProxy = await startRecordingProxy(upstream.adminUrl)
  // A workspace service of an older version: no board endpoint, so its router answers 404, here
  // as a web framework's page (not the error shape its declared endpoints use).
  oldProxy.rule = (_, path) =>
    /\/board(\?|$)/.test(path)
      ? { status: 404, body: `<!DOCTYPE html><pre>Cannot GET ${path}</pre>`, contentType: "text/html" }
      : undefined
  const remote = { SVC_WORKSPACE_TOKEN: TOKEN, SVC_TENANT_SLUG: "acme", SVC_ADMIN_PORT: "off" }
  ;[gateway, oldGateway] = await Promise.all([
    startBuilt({ ...remote, SVC_WORKSPACE_URL: proxy.url }),
    startBuilt({ ...remote, SVC_WORKSPACE_URL: oldProxy.url })
  ])
  // The tenant is resolved on first use and cached: resolved here, so the lists below count only their own calls.
  for (const gw of [gateway, oldGateway]) expect((await http("GET", `${gw.url}/v1/entities`)).status).toBe(200)
}, 120_000)

afterAll(async () => {
  await Promise.all([gateway?.stop(), oldGateway?.stop(), upstream?.stop()])
  await Promise.all([proxy?.close(), oldProxy?.close()])
  rmSync(dir, { recursive: true, force: true })
})

describe("the task list on a remote workspace", () => {
  it("asks the workspace service once per list, with or without paging and filters, and answers what the store does", async () => {
    for (const [entityId, query] of [[ACME_US, ""], [ACME_UK, ""], [ACME_US, "?status=IN_PROGRESS&limit=1"], [ACME_US, "?limit=50"]] as const) {
      const expected = await ownList(entityId, query)
      proxy.calls.length = 0
      const answer = await http("GET", `${gateway.url}/v1/entities/${entityId}/tasks${query}`)
      expect(answer.status, answer.text).toBe(200)
      expect(answer.body, query).toEqual(expected.body)
      expect(answer.headers.get("x-next-cursor"), query).toBe(expected.headers.get("x-next-cursor"))
      expect(named(proxy.calls), query).toEqual([`GET /entities/${entityId}/board`])
    }
    // The board carries `awaiting` where the store's list has one (the demo has running tasks).
    expect((await ownList(ACME_US)).body.some((t: { awaiting?: string }) => typeof t.awaiting === "string")).toBe(true)
  })

  it("answers the spec's 404 for another tenant's or a missing entity, in one call", async () => {
    for (const entityId of [GLOBEX_US, "00000000-0000-4000-8000-000000000000"]) {
      proxy.calls.length = 0
      const answer = await http("GET", `${gateway.url}/v1/entities/${entityId}/tasks`)
      expect(answer.status, answer.text).toBe(404)
      expect(answer.body).toEqual({ statusCode: 404, message: `Entity ${entityId} not found`, error: "Not Found" })
      expect(named(proxy.calls)).toEqual([`GET /entities/${entityId}/board`])
    }
  })

  it("answers the spec's 502, never a 500, when the workspace breaks its contract", async () => {
    const broken: ReadonlyArray<{ status: number; body: string; contentType?: string }> = [
      { status: 200, body: JSON.stringify([{ id: 5 }]) },
      { status: 200, body: JSON.stringify({ tasks: [] }) },
      { status: 200, body: "[{\"id\":" },
      { status: 200, body: "<html>hello</html>", contentType: "text/html" },
      { status: 500, body: "upstream exploded", contentType: "text/plain" },
      { status: 418, body: JSON.stringify({ statusCode: 418, message: "teapot", error: "I'm a teapot" }) }
    ]
    try {
      for (const answer of broken) {
        proxy.rule = (_, path) => (/\/board(\?|$)/.test(path) ? answer : undefined)
        const listed = await http("GET", `${gateway.url}/v1/entities/${ACME_US}/tasks`)
        expect(listed.status, `${answer.body} -> ${listed.text}`).toBe(502)
        expect(listed.body).toMatchObject({ statusCode: 502, error: "Bad Gateway" })
        expect(typeof listed.body.message).toBe("string")
      }
    } finally {
      proxy.rule = () => undefined
    }
    expect((await http("GET", `${gateway.url}/v1/entities/${ACME_US}/tasks`)).status).toBe(200)
  })

  it("against a service without the board, composes the same list, asking for the entity and the tasks at once", async () => {
    const expected = await ownList(ACME_US)
    // The entity's answer held 300 ms: the tasks are asked while it is held, not after.
    oldProxy.rule = ((previous) => (method: string, path: string) =>
      new RegExp(`/entities/${ACME_US}$`).test(path) ? { delayMs: 300 } : previous(method, path))(oldProxy.rule)
    oldProxy.calls.length = 0
    const first = await http("GET", `${oldGateway.url}/v1/entities/${ACME_US}/tasks`)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toEqual(expected.body)
    expect(named(oldProxy.calls).sort()).toEqual(
      [`GET /entities/${ACME_US}/board`, `GET /entities/${ACME_US}`, `GET /entities/${ACME_US}/tasks`, "POST /next-steps"].sort()
    )
    const entityCall = oldProxy.calls.find((c) => c.path.endsWith(`/entities/${ACME_US}`))!
    const tasksCall = oldProxy.calls.find((c) => /\/tasks(\?|$)/.test(c.path))!
    expect(tasksCall.arrived).toBeLessThan(entityCall.answered!)

    // Known to lack the board now: not asked again. A missing entity is still the spec's 404.
    oldProxy.calls.length = 0
    const second = await http("GET", `${oldGateway.url}/v1/entities/${ACME_US}/tasks`)
    expect(second.status, second.text).toBe(200)
    expect(second.body).toEqual(expected.body)
    expect(named(oldProxy.calls).sort()).toEqual([`GET /entities/${ACME_US}`, `GET /entities/${ACME_US}/tasks`, "POST /next-steps"].sort())
    const missing = await http("GET", `${oldGateway.url}/v1/entities/${GLOBEX_US}/tasks`)
    expect(missing.status, missing.text).toBe(404)
    expect(missing.body).toEqual({ statusCode: 404, message: `Entity ${GLOBEX_US} not found`, error: "Not Found" })
  })
})
