/**
 * One listener per audience, attacked on the real process (`src/main.ts`, embedded workspace on
 * a temporary database with the demo fixture's two tenants, bound to acme):
 *
 * - the gateway's port: every route of GatewayApi and WorkspaceApi (read from the definitions),
 *   plus the connect page and its completion, called with every method and with the other
 *   tenant's ids (tenant, entities, tasks incl. a composite child id, documents, rows,
 *   workflows, agents, connect sessions). Each answers 404 in the error shape, the same answer
 *   as for ids that name nothing; the routes without ids return none of the other tenant's data;
 *   and the other tenant's data is unchanged afterwards, read through the admin listener and,
 *   for what no API reads (rows, records, signals), in the database;
 * - the admin listener: 401 without the token or with a wrong one (same length, shorter,
 *   longer, another scheme) on every WorkspaceApi route, docs and OpenAPI included, 200 with it;
 *   loopback by default; start-up refusals for bad settings;
 * - the GL connect flow of this tenant's session through the gateway port.
 */
import { createClient } from "@libsql/client"
import { randomBytes, randomUUID } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { networkInterfaces, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { GatewayApi } from "../../src/api/Api.js"
import { GL_CONNECT_PATH } from "../../src/workspace/server/mount.js"
import { WorkspaceApi } from "../../src/upstream/WorkspaceApi.js"
import { GL_SERVICE_IDS } from "../../src/domain/glServices.js"
import { http, type JsonResponse, type RunningService, startService } from "../support/process.js"
import { type Receiver, startReceiver, until } from "../webhooks/receiver.js"
import { fillPath, fillsOf, METHODS, normalize, paramsOf, type Route, routesOf, type Side, standInFor } from "./routes.js"

const FIXTURE = fileURLToPath(new URL("../../fixtures/demo.json", import.meta.url))
const demo = JSON.parse(readFileSync(FIXTURE, "utf8")) as Record<string, Array<any>>
const THIS = "acme"
const OTHER = "globex"

const sideFromFixture = (slug: string): Side => {
  const tenant = demo.tenants!.find((t) => t.slug === slug)!
  const mine = (k: string) => demo[k]!.filter((x) => x.tenantId === tenant.id)
  const tasks = mine("tasks").map((t) => t.id as string)
  return {
    tenantId: tenant.id,
    slug,
    entities: mine("entities").map((e) => e.id),
    // Every root task and a composite child id of one of them.
    tasks: [...tasks, `${tasks[0]}:review_expenses:child`],
    documents: mine("documents").map((d) => d.id),
    rows: mine("subledgerRows").map((r) => ({ ledger: r.ledger, id: r.id })),
    workflows: mine("workflows").map((w) => w.id),
    agents: [],
    consumers: [],
    webhooks: [],
    deliveries: []
  }
}

const TOKEN = randomBytes(24).toString("base64url") // 32 characters
const bearer = { authorization: `Bearer ${TOKEN}` }
const b64 = Buffer.from("trust boundary").toString("base64")

/** A raw upload: the file as the body, the fields in the query, the header a page cannot send. */
class RawUpload {
  constructor(readonly query: string, readonly bytes: Buffer, readonly contentType: string) {}
}

const request = async (method: string, url: string, body?: unknown, headers?: Record<string, string>): Promise<JsonResponse> => {
  if (!(body instanceof RawUpload)) return http(method, url, body, headers)
  const res = await fetch(`${url}?${body.query}`, {
    method,
    headers: { "content-type": body.contentType, "x-svc-upload": "raw" },
    body: new Uint8Array(body.bytes)
  })
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: res.status, body: parsed, headers: res.headers, text }
}

/** Runs `tasks` with at most `n` at once. */
const pool = async <A>(n: number, tasks: ReadonlyArray<() => Promise<A>>): Promise<Array<A>> => {
  const out: Array<A> = new Array(tasks.length)
  let next = 0
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < tasks.length) {
      const i = next++
      out[i] = await tasks[i]!()
    }
  }))
  return out
}

/**
 * A body for each route that takes one (checked below: every such route has one), valid for
 * the route so that a 404 is the tenant check speaking, not a decode error. Ids in bodies come
 * from the side being used.
 */
const EXAMPLES: Record<string, (side: Side) => unknown> = {
  // GatewayApi
  "entities.createTask": () => ({ workflowId: "expense-review", context: { period: "2026-11" } }),
  "tasks.action": () => ({ type: "approved", comments: "trust boundary" }),
  "tasks.rowAction": (s) => ({ ledger: "expenses", action: "reject_row", rowId: s.rows.find((r) => r.ledger === "expenses")!.id }),
  "events.appendEvent": () => ({ type: "step.completed", source: "worker", seq: 9001, payload: { by: "trust" } }),
  "files.uploadFile": (s) => ({
    source: "receipts",
    data: b64,
    fileName: "t.txt",
    signalTaskId: s.tasks[0],
    signalName: "file_submitted"
  }),
  "files.uploadRawFile": (s) =>
    new RawUpload(`source=receipts&fileName=t.txt&signalTaskId=${s.tasks[0]}&signalName=file_submitted`, Buffer.from("trust"), "text/plain"),
  "files.ingestFile": (s) => ({
    source: "receipts",
    fileRef: { provider: "inline_base64", data: b64 },
    signalTaskId: s.tasks[0],
    signalName: "file_submitted"
  }),
  "data.ingestData": (s) => ({
    events: [{ data: { amount: 1 } }],
    kind: "expense",
    signalTaskId: s.tasks[0],
    signalName: "data_submitted"
  }),
  "subledgers.updateCell": () => ({ field: "amount_gross", value: 1 }),
  "gl.glConnectSession": () => ({ serviceId: "xero" }),
  "inbox.claim": () => ({ override: true }),
  // WorkspaceApi
  "tenants.createTask": () => ({ workflowId: "expense-review", context: { period: "2026-11" } }),
  "tasks.appendEvent": () => ({ type: "step.completed", source: "worker", seq: 9001, payload: { by: "trust" } }),
  // The gateway's own record (what a forged one would claim to be).
  "tasks.recordEvent": () => ({ origin: "gateway", type: "task.created", source: "audit", payload: { by: "trust" } }),
  "tasks.signal": (s) => ({ taskId: s.tasks[0], name: "approve", payload: {} }),
  "tasks.getNextSteps": (s) => ({ taskIds: s.tasks }),
  "inbox.inbox": () => ({ now: "2026-11-01T00:00:00.000Z", limit: 50 }),
  "inbox.claimStep": () => ({ override: true }),
  "documents.putDocument": () => ({}),
  "records.ingestData": () => ({ rows: [{ data: { amount: 1 } }] }),
  "records.updateRow": () => ({ field: "amount_gross", value: 1 }),
  "gl.createGlSession": () => ({ serviceId: "xero" }),
  "registry.createAgent": (s) => ({ kind: "claude", externalRef: "agent_x", name: "Intruder", tenantSlug: s.slug }),
  "registry.createAgentVersion": () => ({ version: "v9", config: {} }),
  "registry.findAgentByKeyHash": () => ({ keyHash: "0".repeat(64) }),
  "registry.glWebhookSuccess": (s) => ({ consumerId: s.consumers[0], service: "xero" }),
  "registry.createDecisionLinks": (s) => ({ tenantSlug: s.slug, taskId: s.tasks[0], actor: "intruder@example.com" }),
  "registry.revokeDecisionLinks": (s) => ({ tenantSlug: s.slug, taskId: s.tasks[0] }),
  "webhooks.createWebhook": (s) => ({ tenant: s.slug, url: "https://example.com/intruder" }),
  // The gateway port's connect completion (outside the HttpApi contracts)
  "connect.complete": () => ({ service: "xero" })
}

const gatewayRoutes = routesOf(GatewayApi)
const workspaceRoutes = routesOf(WorkspaceApi)
/** The connect page and its completion: the only part of the workspace on the gateway port. */
const connectRoutes: ReadonlyArray<Route> = [
  { key: "connect.page", method: "GET", path: `${GL_CONNECT_PATH}/:consumerId`, params: ["consumerId"], hasPayload: false },
  {
    key: "connect.complete",
    method: "POST",
    path: `${GL_CONNECT_PATH}/:consumerId/complete`,
    params: ["consumerId"],
    hasPayload: true
  }
]

let dir: string
let db: string
let gw: RunningService
let mine: Side
let other: Side
let receiver: Receiver
const running: Array<RunningService> = []

const admin = (method: string, path: string, body?: unknown, headers: Record<string, string> = bearer) =>
  request(method, `${gw.adminUrl}${path}`, body, headers)

/** Strings that must never appear in what the gateway port answers (other than echoes of the request). */
const markersOf = (side: Side, name: string): ReadonlyArray<string> => [
  side.tenantId,
  side.slug,
  name,
  ...side.entities,
  ...side.tasks.map((t) => t.split(":")[0]!),
  ...side.documents,
  ...side.rows.map((r) => r.id),
  ...side.workflows,
  ...side.agents,
  ...side.consumers,
  ...side.webhooks,
  ...side.deliveries
]

const leaks = (text: string, markers: ReadonlyArray<string>, echoed: ReadonlyArray<string> = []) =>
  markers.filter((m) => !echoed.some((e) => e.includes(m)) && text.toLowerCase().includes(m.toLowerCase()))

/** Everything of `side` the admin listener can read, as one JSON value. */
const adminSnapshot = async (side: Side) => {
  const t = side.tenantId
  const read = async (path: string) => {
    const res = await admin("GET", path)
    return { path, status: res.status, body: res.body ?? res.text }
  }
  const reads: Array<Promise<unknown>> = [
    read(`/workspace/tenants/by-slug/${side.slug}`),
    read(`/workspace/tenants/${t}/entities`),
    read(`/workspace/tenants/${t}/workflows`),
    read(`/workspace/tenants/${t}/gl`),
    read(`/workspace/registry/agents?tenantId=${t}`)
  ]
  for (const e of side.entities) reads.push(read(`/workspace/tenants/${t}/entities/${e}`), read(`/workspace/tenants/${t}/entities/${e}/tasks`))
  for (const w of side.workflows) reads.push(read(`/workspace/tenants/${t}/workflows/${w}/runbook`))
  for (const a of side.agents) reads.push(read(`/workspace/registry/agents/${a}`))
  reads.push(read(`/workspace/webhooks?tenant=${side.slug}`))
  for (const w of side.webhooks) {
    reads.push(read(`/workspace/webhooks/${w}?tenant=${side.slug}`), read(`/workspace/webhooks/${w}/deliveries?tenant=${side.slug}`))
  }
  for (const task of side.tasks) {
    reads.push(
      read(`/workspace/tasks/${encodeURIComponent(task)}`),
      read(`/workspace/tenants/${t}/tasks/${encodeURIComponent(task)}/next-step`),
      read(`/workspace/tenants/${t}/tasks/${encodeURIComponent(task)}/snapshots`),
      read(`/workspace/tenants/${t}/tasks/${encodeURIComponent(task)}/events`),
      read(`/workspace/tenants/${t}/tasks/${encodeURIComponent(task)}/documents?limit=1000`)
    )
  }
  for (const d of side.documents) reads.push(read(`/workspace/tenants/${t}/documents/${d}/download`))
  const all = await Promise.all(reads)
  expect(all.filter((r: any) => r.status >= 500)).toEqual([])
  return all
}

/** Every row of `tenantId` in every table of the database (child tables through their parent). */
const dbSnapshot = async (tenantId: string) => {
  const client = createClient({ url: db })
  try {
    const tables = (await client.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")).rows
      .map((r) => String(r.name))
      .sort()
    const byParent: Record<string, string> = {
      document_chunks: "document_id IN (SELECT id FROM documents WHERE tenant_id = ?)",
      // Large documents' chunks written before their record (PostgreSQL only; empty on SQLite).
      staged_documents: "id IN (SELECT id FROM documents WHERE tenant_id = ?)",
      agent_versions: "agent_id IN (SELECT id FROM agents WHERE tenant_id = ?)",
      webhook_attempts: "subscription_id IN (SELECT id FROM webhook_subscriptions WHERE tenant_id = ?)",
      tenants: "id = ?"
    }
    const snapshot: Record<string, unknown> = {}
    for (const table of tables) {
      if (table === "workspace_migrations") continue
      // The decision links' signing key (generated once when SVC_LINK_SIGNING_KEYS is unset) is
      // the process's, of no tenant: not tenant data. (The links themselves, decision_links,
      // carry tenant_id and are compared.)
      if (table === "decision_link_keys") continue
      const columns = (await client.execute(`PRAGMA table_info(${table})`)).rows.map((r) => String(r.name))
      const where = byParent[table] ?? (columns.includes("tenant_id") ? "tenant_id = ?" : undefined)
      if (where === undefined) throw new Error(`table ${table} has no tenant_id: teach dbSnapshot how to scope it`)
      const rows = await client.execute({ sql: `SELECT * FROM ${table} WHERE ${where} ORDER BY rowid`, args: [tenantId] })
      snapshot[table] = rows.rows.map((r) =>
        Object.fromEntries(columns.map((c) => {
          const v = (r as any)[c]
          return [c, v instanceof ArrayBuffer ? Buffer.from(v).toString("base64") : v]
        }))
      )
    }
    return snapshot
  } finally {
    client.close()
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-trust-"))
  db = pathToFileURL(join(dir, "workspace.db")).href
  receiver = await startReceiver()
  gw = await startService({
    SVC_DATABASE_URL: db,
    SVC_SEED_FILE: FIXTURE,
    SVC_TENANT_SLUG: THIS,
    SVC_ADMIN_TOKEN: TOKEN,
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`
  })
  running.push(gw)
  // Each tenant gets what only the admin listener can create: an agent, an open connect session,
  // and a webhook subscription with a delivered message (its delivery id).
  const extras = async (side: Side) => {
    const agent = await admin("POST", "/workspace/registry/agents", {
      kind: "claude",
      externalRef: `agent_${side.slug}`,
      name: `${side.slug} agent`,
      tenantSlug: side.slug
    })
    expect(agent.status, agent.text).toBe(201)
    await admin("POST", `/workspace/registry/agents/${agent.body.id}/versions`, { version: "v1", config: { model: "m" } })
    const session = await admin("POST", `/workspace/tenants/${side.tenantId}/gl/sessions`, { serviceId: "xero" })
    expect(session.status, session.text).toBe(201)
    const hook = await admin("POST", "/workspace/webhooks", {
      tenant: side.slug,
      url: receiver.url(`/${side.slug}`),
      events: ["task.created"]
    })
    expect(hook.status, hook.text).toBe(201)
    const task = await admin("POST", `/workspace/tenants/${side.tenantId}/entities/${side.entities[0]}/tasks`, {
      workflowId: side.workflows[0],
      context: { period: "2026-11" }
    })
    expect(task.status, task.text).toBe(201)
    // Delivered (and so settled: the snapshots below compare the webhook tables too).
    const deliveryId = await until(`${side.slug}'s delivery`, async () => {
      const log = await admin("GET", `/workspace/webhooks/${hook.body.id}/deliveries?tenant=${side.slug}`)
      const done = (log.body as Array<{ deliveryId: string; outcome: string }>).find((a) => a.outcome === "delivered")
      return done?.deliveryId
    })
    return { ...side, agents: [agent.body.id], consumers: [session.body.consumerId], webhooks: [hook.body.id], deliveries: [deliveryId] }
  }
  ;[mine, other] = await Promise.all([extras(sideFromFixture(THIS)), extras(sideFromFixture(OTHER))])
}, 60_000)

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  await receiver?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("the gateway port answers nothing of another tenant", { timeout: 120_000 }, () => {
  it("knows a body for every route that takes one, and ids for every path parameter", () => {
    const withBody = [...gatewayRoutes, ...workspaceRoutes, ...connectRoutes].filter((r) => r.hasPayload).map((r) => r.key)
    expect(withBody.filter((k) => EXAMPLES[k] === undefined)).toEqual([])
    // Sanity: the definitions were read (and the attack below is not vacuous).
    expect(gatewayRoutes.length).toBeGreaterThanOrEqual(21)
    expect(workspaceRoutes.length).toBeGreaterThanOrEqual(27)
    expect(gatewayRoutes.every((r) => r.path.startsWith("/v1/"))).toBe(true)
    expect(workspaceRoutes.every((r) => r.path.startsWith("/workspace/"))).toBe(true)
  })

  it("every route with ids, every method, the other tenant's ids: 404, exactly as for ids naming nothing; other tenant's data unchanged", async () => {
    const adminBefore = await adminSnapshot(other)
    const dbBefore = await dbSnapshot(other.tenantId)
    const standIn = standInFor(other)

    // Gateway routes with ids and the connect routes: with the other tenant's ids. WorkspaceApi
    // routes: with the other tenant's ids and with this tenant's own (none of them is served here).
    const targets: Array<{ readonly template: string; readonly routes: ReadonlyArray<Route>; readonly side: Side }> = []
    const byTemplate = (routes: ReadonlyArray<Route>) => {
      const map = new Map<string, Array<Route>>()
      for (const r of routes) map.set(r.path, [...(map.get(r.path) ?? []), r])
      return map
    }
    for (const [template, routes] of byTemplate([...gatewayRoutes, ...connectRoutes])) {
      if (paramsOf(template).length > 0) targets.push({ template, routes, side: other })
    }
    for (const [template, routes] of byTemplate(workspaceRoutes)) {
      targets.push({ template, routes, side: other }, { template, routes, side: mine })
    }
    // The workspace's own documents on the gateway port.
    for (const template of ["/workspace/openapi.json", "/workspace/docs", "/workspace/gl/webhook/success"]) {
      if (!targets.some((t) => t.template === template)) targets.push({ template, routes: [], side: other })
    }

    const failures: Array<string> = []
    const jobs: Array<() => Promise<void>> = []
    let calls = 0
    for (const { routes, side, template } of targets) {
      const twinSide = side === other ? standIn : standInFor(side)
      for (const [fill, twinFill] of fillsOf(paramsOf(template), side, twinSide)) {
        for (const method of METHODS) {
          // The body of the route with this method, else of any route on the path (a wrong method with a body).
          const route = routes.find((r) => r.method === method) ?? routes.find((r) => r.hasPayload)
          const example = route !== undefined ? EXAMPLES[route.key] : undefined
          // A raw upload's body only with its own method: another method's non-JSON body is a 415
          // before routing, whatever the ids (the same for ids naming nothing).
          const raw = route !== undefined && route.method !== method && example?.(side) instanceof RawUpload
          const send = method === "GET" || method === "HEAD" || method === "OPTIONS" || raw ? undefined : example
          jobs.push(async () => {
            const path = fillPath(template, fill)
            const [res, twin] = await Promise.all([
              request(method, `${gw.url}${path}`, send?.(side)),
              request(method, `${gw.url}${fillPath(template, twinFill)}`, send?.(twinSide))
            ])
            calls += 2
            const what = `${method} ${path} (${side.slug}'s ids)`
            // The route's own method must say 404. Another method on a served path may say 405
            // (the allowed methods depend on the path's shape only); on an unserved path, 404.
            const served = routes.some((r) => r.method === method) || template.startsWith("/workspace/") && !template.startsWith(GL_CONNECT_PATH)
            const allowed = served ? [404] : [404, 405]
            if (!allowed.includes(res.status)) failures.push(`${what}: ${res.status} ${res.text.slice(0, 200)}`)
            else if (twin.status !== res.status) failures.push(`${what}: ${res.status}, but its stand-in answered ${twin.status}`)
            else if (method !== "HEAD") {
              const shape = res.body !== null && typeof res.body === "object" &&
                Object.keys(res.body).sort().join() === "error,message,statusCode" &&
                res.body.statusCode === res.status && typeof res.body.error === "string" && typeof res.body.message === "string"
              if (!shape) failures.push(`${what}: not the error shape: ${res.text.slice(0, 200)}`)
              else if (normalize(res.text, fill) !== normalize(twin.text, twinFill)) {
                failures.push(`${what}: answers unlike ids naming nothing: ${res.text} vs ${twin.text}`)
              }
            }
          })
        }
      }
    }
    await pool(16, jobs)
    expect(failures).toEqual([])
    expect(calls).toBeGreaterThan(1000)

    expect(await adminSnapshot(other)).toEqual(adminBefore)
    expect(await dbSnapshot(other.tenantId)).toEqual(dbBefore)
  })

  it("routes without ids (and /docs, /openapi.json) answer only this tenant's data, with every method", async () => {
    const dbBefore = await dbSnapshot(other.tenantId)
    const markers = markersOf(other, "Globex")
    const templates = [
      ...new Set([...gatewayRoutes.filter((r) => r.params.length === 0).map((r) => r.path), "/docs", "/openapi.json"])
    ]
    expect(templates).toEqual(expect.arrayContaining(["/v1/health", "/v1/entities", "/v1/gl/status", "/v1/gl/connect/session", "/v1/gl"]))
    const answers = await pool(
      8,
      templates.flatMap((path) =>
        METHODS.map((method) => async () => {
          const route = gatewayRoutes.find((r) => r.path === path && r.method === method)
          const body = route?.hasPayload === true ? EXAMPLES[route.key]!(mine) : undefined
          const res = await request(method, `${gw.url}${path}`, body)
          return { what: `${method} ${path}`, status: res.status, leaked: leaks(res.text, markers) }
        })
      )
    )
    expect(answers.filter((a) => a.leaked.length > 0 || a.status >= 500)).toEqual([])
    // The routes were really served (this tenant's data came back).
    expect(answers.find((a) => a.what === "GET /v1/entities")!.status).toBe(200)
    expect(answers.find((a) => a.what === "GET /openapi.json")!.status).toBe(200)
    const entities = await request("GET", `${gw.url}/v1/entities`)
    expect(entities.body.map((e: any) => e.id).sort()).toEqual([...mine.entities].sort())
    expect(await dbSnapshot(other.tenantId)).toEqual(dbBefore)
  })

  it("this tenant's routes carrying the other tenant's ids in the body change nothing of the other tenant", async () => {
    const adminBefore = await adminSnapshot(other)
    const dbBefore = await dbSnapshot(other.tenantId)
    const markers = markersOf(other, "Globex")
    const [reviewTask, , , uploadTask] = mine.tasks
    const foreignTask = other.tasks[1]!
    const foreignRow = other.rows.find((r) => r.ledger === "expenses")!.id
    const cases: Array<readonly [string, string, unknown]> = [
      ["POST", `/v1/tasks/${reviewTask}/row-action`, { ledger: "expenses", action: "reject_row", rowId: foreignRow }],
      ["POST", `/v1/tasks/${reviewTask}/row-action`, { ledger: "expenses", action: "edit_cell", rowId: foreignRow, field: "amount_gross", value: 1 }],
      ["POST", `/v1/tasks/${uploadTask}/files`, { ...(EXAMPLES["files.uploadFile"]!(other) as object), signalTaskId: foreignTask }],
      ["POST", `/v1/tasks/${uploadTask}/files/ingest`, { ...(EXAMPLES["files.ingestFile"]!(other) as object), signalTaskId: foreignTask }],
      ["POST", `/v1/tasks/${uploadTask}/data/ingest`, { ...(EXAMPLES["data.ingestData"]!(other) as object), signalTaskId: foreignTask }],
      ["POST", `/v1/entities/${mine.entities[0]}/tasks`, { workflowId: other.workflows[0], context: { period: "2026-11" } }]
    ]
    for (const [method, path, body] of cases) {
      const res = await request(method, `${gw.url}${path}`, body)
      expect(res.status, `${method} ${path}`).toBeLessThan(500)
      expect(leaks(res.text, markers, [JSON.stringify(body)]), `${method} ${path}`).toEqual([])
    }
    // Another tenant's own workflow is as unknown as a workflow that does not exist.
    const [foreign, none] = await Promise.all([
      request("POST", `${gw.url}/v1/entities/${mine.entities[0]}/tasks`, { workflowId: other.workflows[0], context: {} }),
      request("POST", `${gw.url}/v1/entities/${mine.entities[0]}/tasks`, { workflowId: "no-such-workflow", context: {} })
    ])
    expect(foreign.status).toBe(none.status)
    expect(foreign.text.replace(other.workflows[0]!, "<w>")).toBe(none.text.replace("no-such-workflow", "<w>"))
    expect(await adminSnapshot(other)).toEqual(adminBefore)
    expect(await dbSnapshot(other.tenantId)).toEqual(dbBefore)
  })

  it("the same routes with this tenant's ids are served (the 404s above are the tenant check, not a dead route)", async () => {
    const dbBefore = await dbSnapshot(other.tenantId)
    const fills = (route: Route) => fillsOf(route.params, mine, standInFor(mine))
    const results = await pool(
      4,
      gatewayRoutes.filter((r) => r.params.length > 0).map((route) => async () => {
        const [fill] = fills(route).filter(([f]) => f.ledger === undefined || f.ledger === "expenses")
        const res = await request(route.method, `${gw.url}${fillPath(route.path, fill![0])}`, EXAMPLES[route.key]?.(mine))
        return { what: `${route.method} ${fillPath(route.path, fill![0])}`, status: res.status, text: res.text.slice(0, 200) }
      })
    )
    expect(results.filter((r) => r.status === 404 || r.status >= 500)).toEqual([])
    expect(await dbSnapshot(other.tenantId)).toEqual(dbBefore)
  })
})

describe("the GL connect page on the gateway port", { timeout: 60_000 }, () => {
  it("another tenant's session: page and completion 404 like a session that does not exist; the session stays open", async () => {
    const foreign = other.consumers[0]!
    const missing = randomUUID()
    for (const [method, suffix, body] of [["GET", "", undefined], ["POST", "/complete", { service: "xero" }]] as const) {
      const [res, none] = await Promise.all([
        request(method, `${gw.url}${GL_CONNECT_PATH}/${foreign}${suffix}`, body),
        request(method, `${gw.url}${GL_CONNECT_PATH}/${missing}${suffix}`, body)
      ])
      expect(res.status).toBe(404)
      expect(res.body).toEqual({ statusCode: 404, message: `Connect session ${foreign} not found`, error: "Not Found" })
      expect(res.text.replace(foreign, "<id>")).toBe(none.text.replace(missing, "<id>"))
    }
    const gl = await admin("GET", `/workspace/tenants/${other.tenantId}/gl`)
    expect(gl.body).toEqual({ connection: null })
  })

  it("this tenant's session: page, refused completions, completion, status connected; a used session is gone", async () => {
    const session = await request("POST", `${gw.url}/v1/gl/connect/session`, { serviceId: "netsuite" })
    expect(session.status).toBe(200)
    const { consumerId, sessionUrl } = session.body
    expect(sessionUrl).toBe(`${gw.url}${GL_CONNECT_PATH}/${consumerId}`)

    const page = await request("GET", sessionUrl)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toMatch(/text\/html/)
    expect(page.headers.get("cache-control")).toBe("no-store")
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    expect(page.text).toContain(`value="netsuite" checked`)
    // The page completes through its own URL, never the admin webhook.
    expect(page.text).toContain(`"/complete"`)
    expect(page.text).not.toContain("webhook")

    const unknown = await request("POST", `${sessionUrl}/complete`, { service: "ledger9000" })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringContaining(GL_SERVICE_IDS.join(", ")) })
    for (const bad of [{}, { service: 7 }, { service: "xero", consumerId: other.consumers[0] }]) {
      const res = await request("POST", `${sessionUrl}/complete`, bad)
      expect(res.status, JSON.stringify(bad)).toBe(400)
      expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
    }
    expect((await request("GET", `${gw.url}/v1/gl/status`)).body.service).not.toBe("netsuite")

    const done = await request("POST", `${sessionUrl}/complete`, { service: "netsuite" })
    expect(done.status).toBe(204)
    const status = await request("GET", `${gw.url}/v1/gl/status`)
    expect(status.body).toMatchObject({ connected: true, tenantId: mine.tenantId, service: "netsuite", status: "ACTIVE" })

    expect((await request("POST", `${sessionUrl}/complete`, { service: "xero" })).status).toBe(404)
    expect((await request("GET", sessionUrl)).status).toBe(404)
    // The other tenant's GL is untouched.
    expect((await admin("GET", `/workspace/tenants/${other.tenantId}/gl`)).body).toEqual({ connection: null })
  })
})

describe("the admin listener", { timeout: 60_000 }, () => {
  const sameLength = () => {
    const wrong = TOKEN.slice(0, -1) + (TOKEN.endsWith("A") ? "B" : "A")
    expect(wrong).toHaveLength(TOKEN.length)
    return wrong
  }

  it("401 without a valid bearer token on every route (docs, OpenAPI and unknown paths included), in the error shape", async () => {
    const standIn = standInFor(other)
    const paths = [
      ...new Set([
        ...workspaceRoutes.map((r) => `${r.method} ${fillPath(r.path, fillsOf(r.params, other, standIn)[0]![0])}`),
        "GET /workspace/openapi.json",
        "GET /workspace/docs",
        "GET /workspace/nowhere",
        "GET /",
        `GET ${GL_CONNECT_PATH}/${other.consumers[0]}`
      ])
    ]
    const credentials: ReadonlyArray<readonly [string, Record<string, string>]> = [
      ["none", {}],
      ["same length, wrong", { authorization: `Bearer ${sameLength()}` }],
      ["shorter", { authorization: `Bearer ${TOKEN.slice(0, 5)}` }],
      ["longer", { authorization: `Bearer ${TOKEN}${TOKEN}` }],
      ["empty", { authorization: "Bearer " }],
      ["another scheme", { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString("base64")}` }],
      ["the token without a scheme", { authorization: TOKEN }]
    ]
    const results = await pool(
      16,
      paths.flatMap((line) =>
        credentials.map(([name, headers]) => async () => {
          const [method, path] = line.split(" ") as [string, string]
          const res = await request(method, `${gw.adminUrl}${path}`, method === "GET" || method === "DELETE" ? undefined : {}, headers)
          const ok = res.status === 401 &&
            /^Bearer\b/.test(res.headers.get("www-authenticate") ?? "") &&
            res.body?.statusCode === 401 && res.body?.error === "Unauthorized" && typeof res.body?.message === "string" &&
            Object.keys(res.body).length === 3
          return ok ? undefined : `${line} with ${name}: ${res.status} ${res.text.slice(0, 120)}`
        })
      )
    )
    expect(results.filter((r) => r !== undefined)).toEqual([])
  })

  it("200 with the token: the WorkspaceApi, its OpenAPI document and docs page", async () => {
    const [openapi, docs, agents, tenant] = await Promise.all([
      admin("GET", "/workspace/openapi.json"),
      admin("GET", "/workspace/docs"),
      admin("GET", "/workspace/registry/agents"),
      admin("GET", `/workspace/tenants/by-slug/${OTHER}`)
    ])
    expect(openapi.status).toBe(200)
    expect(openapi.body.info.title).toBe("Workspace service")
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/text\/html/)
    expect(agents.status).toBe(200)
    expect(tenant.body).toMatchObject({ id: other.tenantId, slug: OTHER })
    // The admin listener does not serve the tenant's users: no /v1 there.
    expect((await admin("GET", "/v1/health")).status).toBe(404)
  })

  it("binds loopback by default and names its URL in the start-up log; SVC_ADMIN_PORT=off runs none", async () => {
    const local = await startService({ SVC_DATABASE_URL: db, SVC_TENANT_SLUG: THIS, SVC_ADMIN_PORT: "0" })
    running.push(local)
    expect(local.output()).toMatch(/admin: +http:\/\/127\.0\.0\.1:\d+\/workspace \(.*no token/)
    const port = Number(new URL(local.adminUrl).port)
    expect(port).toBeGreaterThan(0)
    expect((await request("GET", `${local.adminUrl}/workspace/registry/agents`)).status).toBe(200)
    // Not reachable on this machine's other addresses.
    const external = Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === "IPv4" && !a.internal)
    if (external !== undefined) {
      const refused = await fetch(`http://${external.address}:${port}/workspace/registry/agents`, { signal: AbortSignal.timeout(3000) })
        .then((r) => `answered ${r.status}`, (e: Error) => `${(e.cause as { code?: string } | undefined)?.code ?? e.name}`)
      // Refused, or dropped by a firewall: either way not served.
      expect(refused).toMatch(/^(ECONNREFUSED|EHOSTUNREACH|ENETUNREACH|TimeoutError)$/)
    }
    await local.stop()

    const off = await startService({ SVC_DATABASE_URL: db, SVC_TENANT_SLUG: THIS, SVC_ADMIN_PORT: "off" })
    running.push(off)
    expect(off.output()).toMatch(/admin: +off \(SVC_ADMIN_PORT=off\)/)
    expect((await request("GET", `${off.url}/workspace/registry/agents`)).status).toBe(404)
    await off.stop()
  })

  it("refuses to start on bad settings, naming the variable", async () => {
    const refuse = async (env: Record<string, string>, message: RegExp) =>
      expect(startService({ SVC_DATABASE_URL: db, SVC_TENANT_SLUG: THIS, ...env })).rejects.toThrow(message)
    await Promise.all([
      refuse({ SVC_ADMIN_HOST: "0.0.0.0" }, /SVC_ADMIN_HOST.*0\.0\.0\.0.*not a loopback address.*SVC_ADMIN_TOKEN/),
      refuse({ SVC_ADMIN_PORT: "admin" }, /SVC_ADMIN_PORT.*must be a port number \(0 for a free port\) or .*off/),
      refuse({ SVC_ADMIN_TOKEN: "short" }, /SVC_ADMIN_TOKEN.*must be at least 16 characters/),
      refuse({ SVC_ADMIN_PORT: String(new URL(gw.adminUrl).port) }, /Cannot open the admin listener on http:\/\/127\.0\.0\.1:\d+ .*already in use.*SVC_ADMIN_PORT/)
    ])
  })
})
