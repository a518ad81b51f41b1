/**
 * The workspace server (WorkspaceApiLive) as a client other than ours sees it: the published
 * OpenAPI document, raw-body uploads, download headers, error shapes, and the registry and GL
 * webhook routes with and without the embedded extras behind them.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { createServer } from "node:http"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import { BadRequest, Conflict, NotFound } from "../../src/api/errors.js"
import { DOCUMENT_HEADER } from "../../src/upstream/documents.js"
import type { Agent, AgentVersion, WorkspaceExtras } from "../../src/upstream/extras.js"
import { WORKSPACE_OPENAPI_FILE, workspaceOpenApi } from "../../src/upstream/openapi.js"
import { makeWorkspaceHttpApp } from "../../src/workspace/server/server.js"
import { overStore, type TestWorkspace } from "../support/storeWorkspace.js"
import { contractFixture, DOC_NEW_BYTES, ID } from "./contractFixture.js"
import { serverUrl, workspaceServer } from "./httpHarness.js"

interface Raw {
  readonly status: number
  readonly headers: Headers
  readonly bytes: Buffer
  readonly body: any
}

/** A request to the server in context, with whatever body and headers a foreign client would send. */
const raw = (method: string, path: string, init: { body?: string | Uint8Array; headers?: Record<string, string> } = {}) =>
  Effect.flatMap(serverUrl, (url) =>
    Effect.promise(async (): Promise<Raw> => {
      const res = await fetch(url + path, { method, ...init })
      const bytes = Buffer.from(await res.arrayBuffer())
      let body: unknown = undefined
      try {
        body = JSON.parse(bytes.toString("utf8"))
      } catch {
        body = bytes.toString("utf8")
      }
      return { status: res.status, headers: res.headers, bytes, body }
    }))

const json = (method: string, path: string, body: unknown) =>
  raw(method, path, { body: JSON.stringify(body), headers: { "content-type": "application/json" } })

const withServer = <A, E>(
  server: Layer.Layer<HttpServer.HttpServer, unknown>,
  body: Effect.Effect<A, E, HttpServer.HttpServer>
) => Effect.provide(body, server)

const storeServer = () => overStore(contractFixture(), (ws) => workspaceServer(ws))

const operationsOf = (doc: any) =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, op }))
  )

describe("workspace OpenAPI document", () => {
  it.live("is served at /workspace/openapi.json: every operation summarized and described, valid OpenAPI", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const res = yield* raw("GET", "/workspace/openapi.json")
        expect(res.status).toBe(200)
        expect(res.body).toEqual(JSON.parse(JSON.stringify(workspaceOpenApi())))
        const operations = operationsOf(res.body)
        expect(operations).toHaveLength(46) // 42, the inbox with its two claim operations, and the task board
        for (const { key, op } of operations) {
          expect(key.split(" ")[1]!.startsWith("/workspace/"), key).toBe(true)
          expect(op.summary, key).toEqual(expect.any(String))
          expect(op.description?.length ?? 0, key).toBeGreaterThan(20)
          expect(op.responses["404"] ?? op.responses["400"], key).toBeDefined()
        }
        expect(operations.map((o) => o.key)).toEqual(expect.arrayContaining([
          "POST /workspace/registry/agents",
          "GET /workspace/registry/agents",
          "GET /workspace/registry/agents/{id}",
          "DELETE /workspace/registry/agents/{id}",
          "POST /workspace/registry/agents/{id}/versions",
          "POST /workspace/gl/webhook/success",
          // The gateway's own records and agents' own events (origin gateway or agent), apart from producers' appends.
          "POST /workspace/tenants/{tenantId}/tasks/{taskId}/records"
        ]))
        expect(JSON.stringify(res.body)).not.toContain("HttpApiDecodeError")
        const upload = res.body.paths["/workspace/tenants/{tenantId}/tasks/{taskId}/documents"].post
        expect(Object.keys(upload.requestBody.content)).toEqual(["application/octet-stream"])
        const validated = yield* Effect.promise(() => SwaggerParser.validate(structuredClone(res.body)))
        expect(validated.info.title).toBe("Workspace service")
      })
    ))

  it("the published docs/workspace-openapi.json is up to date (npm run workspace:openapi)", () => {
    const published = JSON.parse(readFileSync(WORKSPACE_OPENAPI_FILE, "utf8"))
    expect(published).toEqual(JSON.parse(JSON.stringify(workspaceOpenApi())))
  })
})

describe("workspace server", () => {
  it.live("a data row or a document sends no decision's or row action's signal, in any spelling, on this API too (the admin listener's)", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const tasks = `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}`
        for (const name of ["approve", "reject", "user_action", "\u0430pprove", "File_Submitted"]) {
          const row = yield* json("POST", `${tasks}/data`, { rows: [{ data: { x: 1 } }], signal: { taskId: ID.taskUpload, name } })
          expect([row.status, row.body.message], name).toEqual([400, expect.stringMatching(/^signalName: .*(step signal|send it exactly so)/)])
        }
        for (const name of ["approve", "reject", "File_Submitted"]) {
          const query = new URLSearchParams({ source: "x", filename: "a.pdf", contentType: "application/pdf", signalTaskId: ID.taskUpload, signalName: name })
          const doc = yield* raw("POST", `${tasks}/documents?${query}`, { body: new Uint8Array([1, 2]), headers: { "content-type": "application/octet-stream" } })
          expect([doc.status, doc.body.message], name).toEqual([400, expect.stringContaining("signalName")])
        }
        const listed = yield* raw("GET", `${tasks}/documents?limit=50`)
        expect(listed.body.some((d: { source: string }) => d.source === "x")).toBe(false)
        const next = yield* raw("GET", `${tasks}/next-step`)
        expect(next.body.step.id).toBe(next.body.steps.find((s: { status: string }) => s.status === "IN_PROGRESS").id)
      })
    ))

  it.live("ids in any case name what they name in lower case, in paths, bodies and queries (the admin listener's API)", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const up = (id: string) => id.toUpperCase()
        const paths = [
          `/workspace/tenants/${ID.tenantA}/entities`,
          `/workspace/tenants/${ID.tenantA}/entities/${ID.entityA1}/board`,
          `/workspace/tasks/${ID.taskUpload}`,
          `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/next-step`,
          `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskReview}/documents?limit=5`,
          `/workspace/tenants/${ID.tenantA}/documents/${ID.docNew}/download`
        ]
        for (const path of paths) {
          const lower = yield* raw("GET", path)
          expect(lower.status, path).toBe(200)
          const shouted = yield* raw("GET", path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, up))
          expect([shouted.status, shouted.bytes.equals(lower.bytes)], path).toEqual([200, true])
        }
        // Another tenant's record is still none of this one's, in any case.
        expect((yield* raw("GET", `/workspace/tenants/${up(ID.tenantA)}/documents/${up(ID.docBeta)}/download`)).status).toBe(404)
        // Ids in bodies and queries too: a signal's task, a data row's signal, a document's signal.
        const signal = yield* json("POST", `/workspace/tenants/${ID.tenantA}/signals`, { taskId: up(ID.taskReview), name: "custom_ping", payload: {} })
        expect(signal.status, JSON.stringify(signal.body)).toBeLessThan(300)
        const rows = yield* json("POST", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskReview}/data`, {
          rows: [{ data: { x: 1 } }],
          signal: { taskId: up(ID.taskReview), name: "custom_ping" }
        })
        expect([rows.status, rows.body[0].signaled]).toEqual([201, true])
        const query = new URLSearchParams({ source: "y", filename: "a.pdf", contentType: "application/pdf", signalTaskId: up(ID.taskUpload), signalName: "file_submitted" })
        const doc = yield* raw("POST", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/documents?${query}`, {
          body: new Uint8Array([1]),
          headers: { "content-type": "application/octet-stream" }
        })
        expect(doc.status, JSON.stringify(doc.body)).toBe(201)
        expect((yield* raw("GET", `/workspace/tasks/${ID.taskUpload}`)).body.currentStep).not.toBe("upload")
      })
    ))

  it.live("stores a raw octet-stream body with metadata in the query, and streams it back with its headers", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256)
        const query = new URLSearchParams({
          source: "bank_statement", filename: "Relevé d'octobre.pdf", contentType: "application/pdf",
          signalTaskId: ID.taskUpload, signalName: "file_submitted", signalPayload: JSON.stringify({ via: "raw" })
        })
        const put = yield* raw("POST", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/documents?${query}`, {
          body: bytes, headers: { "content-type": "application/octet-stream" }
        })
        expect(put.status).toBe(201)
        expect(put.body).toMatchObject({ filename: "Relevé d'octobre.pdf", contentType: "application/pdf", sizeBytes: bytes.length })
        const snaps = yield* raw("GET", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/snapshots`)
        expect(snaps.body.upload).toMatchObject({ via: "raw", documentRef: put.body.id })

        const got = yield* raw("GET", `/workspace/tenants/${ID.tenantA}/documents/${put.body.id}/download`)
        expect(got.status).toBe(200)
        expect(got.headers.get("content-type")).toBe("application/pdf")
        expect(got.headers.get("content-length")).toBe(String(bytes.length))
        expect(got.headers.get("content-disposition")).toContain("attachment")
        expect(got.headers.get("content-disposition")).toContain("filename*=UTF-8''Relev%C3%A9")
        expect(JSON.parse(decodeURIComponent(got.headers.get(DOCUMENT_HEADER)!))).toEqual(put.body)
        expect(Buffer.compare(got.bytes, Buffer.from(bytes))).toBe(0)

        const seeded = yield* raw("GET", `/workspace/tenants/${ID.tenantA}/documents/${ID.docNew}/download`)
        expect(new Uint8Array(seeded.bytes)).toEqual(DOC_NEW_BYTES)
      })
    ))

  it.live("every failure answers in the spec's error shape", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const missing = yield* raw("GET", `/workspace/tasks/${ID.missing}`)
        expect(missing.status).toBe(404)
        expect(missing.body).toEqual({ statusCode: 404, message: `Task ${ID.missing} not found`, error: "Not Found" })

        const route = yield* raw("GET", "/workspace/nowhere")
        expect(route.status).toBe(404)
        expect(route.body).toMatchObject({ statusCode: 404, error: "Not Found" })

        const malformed = yield* raw("POST", `/workspace/tenants/${ID.tenantA}/signals`, {
          body: "{not json", headers: { "content-type": "application/json" }
        })
        expect(malformed.status).toBe(400)
        expect(malformed.body).toMatchObject({ statusCode: 400, error: "Bad Request" })

        const invalid = yield* json("POST", `/workspace/tenants/${ID.tenantA}/signals`, { taskId: ID.taskApprove, payload: {} })
        expect(invalid.status).toBe(400)
        expect(invalid.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
        expect(invalid.body.message).toContain("name")

        const halfSignal = yield* raw(
          "POST",
          `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/documents?source=s&filename=f&contentType=text/plain&signalName=x`,
          { body: "abc", headers: { "content-type": "application/octet-stream" } }
        )
        expect(halfSignal.status).toBe(400)
        expect(halfSignal.body.message).toContain("signalTaskId")

        const rejected = yield* raw("POST", `/workspace/tenants/${ID.tenantA}/subledgers/expenses/${ID.rowRejected}/reject`)
        expect(rejected.status).toBe(400)
        expect(rejected.body).toMatchObject({ statusCode: 400, error: "Bad Request", currentStatus: "REJECTED" })

        const field = yield* json("PATCH", `/workspace/tenants/${ID.tenantA}/subledgers/expenses/${ID.rowNeeds}`, { field: "x", value: 1 })
        expect(field.body).toMatchObject({ statusCode: 400, code: "INVALID_FIELD" })

        const conflict = yield* json("POST", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskReview}/events`, {
          type: "other", source: "worker", seq: 1, payload: {}
        })
        expect(conflict.status).toBe(409)
        expect(conflict.body).toMatchObject({ statusCode: 409, error: "Conflict" })

        const gl = yield* raw("GET", `/workspace/tenants/${ID.tenantB}/gl`)
        expect(gl.body).toEqual({ connection: null })
      })
    ))

  it.live("a query parameter an endpoint does not declare is a 400 naming it, as on /v1 (a typo had answered every task)", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const tasks = `/workspace/tenants/${ID.tenantA}/entities/${ID.entityA1}/tasks`
        const all = yield* raw("GET", tasks)
        expect(all.status).toBe(200)
        const typo = yield* raw("GET", `${tasks}?lmit=1`)
        expect(typo.status).toBe(400)
        expect(typo.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
        expect(typo.body.message).toMatch(/^lmit: is unexpected, expected: .*"limit"/)
        const none = yield* raw("GET", `/workspace/tasks/${ID.taskReview}?cache=${"é".repeat(3)}`)
        expect(none.body).toMatchObject({ statusCode: 400, message: "cache: is unexpected: this endpoint takes no query parameters" })
        const twice = yield* raw("GET", `${tasks}?limit=1&limit=2`)
        expect(twice.body).toMatchObject({ statusCode: 400, message: "limit: is given 2 times, expected once" })
        // A count in digits only: NumberFromString had read an empty value as 0, 0x10 as 16 and 1e2 as 100.
        for (const lax of ["", "0x10", "1e2", "+5", " 5", "5.0", "-1", "9999999999999999", "9007199254740993"]) {
          const res = yield* raw("GET", `${tasks}?limit=${encodeURIComponent(lax)}`)
          // One message, about what was sent (not the number a 16-digit text rounds to).
          expect([res.status, res.body.message], lax).toEqual([400, expect.stringMatching(/^limit: must be an integer from 1 to \d+$/)])
        }
        // Declared ones are taken as before; a path no route has is still the router's 404.
        expect((yield* raw("GET", `${tasks}?limit=1`)).status).toBe(200)
        expect((yield* raw("GET", "/workspace/nowhere?x=1")).status).toBe(404)
      })
    ))

  it.live("a body over the limit answers 413 before it is read", () =>
    withServer(
      overStore(contractFixture(), (ws) => workspaceServer(ws, undefined, { maxBodyBytes: 1024 })),
      Effect.gen(function*() {
        const res = yield* raw("POST", `/workspace/tenants/${ID.tenantA}/tasks/${ID.taskUpload}/documents?source=s&filename=f&contentType=text/plain`, {
          body: new Uint8Array(4096), headers: { "content-type": "application/octet-stream" }
        })
        expect(res.status).toBe(413)
        expect(res.body).toMatchObject({ statusCode: 413, error: "Payload Too Large" })
      })
    ))

  it.live("without extras the registry and the GL webhook answer 501 in the spec's shape", () =>
    withServer(
      storeServer(),
      Effect.gen(function*() {
        const id = randomUUID()
        const answers = [
          yield* json("POST", "/workspace/registry/agents", { kind: "claude", externalRef: "agent_1", tenantSlug: "alpha", name: "A" }),
          yield* raw("GET", "/workspace/registry/agents"),
          yield* raw("GET", `/workspace/registry/agents/${id}`),
          yield* raw("DELETE", `/workspace/registry/agents/${id}`),
          yield* json("POST", `/workspace/registry/agents/${id}/versions`, { version: "1" }),
          yield* json("POST", "/workspace/gl/webhook/success", { consumerId: "c", service: "xero" })
        ]
        for (const res of answers) {
          expect(res.status).toBe(501)
          expect(res.body).toMatchObject({ statusCode: 501, error: "Not Implemented" })
        }
      })
    ))
})

/** A registry held in a Map, plus the store's GL sessions: what the server delegates to. */
const fakeExtras = (memory: TestWorkspace): WorkspaceExtras => {
  const agents = new Map<string, Agent>()
  const tenants: Record<string, string> = { alpha: ID.tenantA, beta: ID.tenantB }
  return {
    completeGlSession: (consumerId, service) =>
      Effect.flatMap(memory.completeGl(consumerId, service), (completed) =>
        completed ? Effect.void : Effect.fail(new NotFound({ message: `GL session ${consumerId} not found` }))),
    createAgent: (input) => {
      const tenantId = input.tenantId ?? tenants[input.tenantSlug ?? ""]
      if (tenantId === undefined) return Effect.fail(new BadRequest({ message: "tenant: unknown tenant" }))
      const agent: Agent = {
        id: randomUUID(), kind: input.kind, externalRef: `${input.kind}://${input.externalRef}`, tenantId, name: input.name,
        createdAt: new Date().toISOString(), versions: []
      }
      agents.set(agent.id, agent)
      return Effect.succeed({ ...agent, apiKey: "ak_secret" })
    },
    listAgents: (tenantId) => Effect.succeed([...agents.values()].filter((a) => tenantId === undefined || a.tenantId === tenantId)),
    getAgent: (id) => {
      const agent = agents.get(id)
      return agent === undefined ? Effect.fail(new NotFound({ message: `Agent ${id} not found` })) : Effect.succeed(agent)
    },
    deleteAgent: (id) =>
      agents.delete(id) ? Effect.void : Effect.fail(new NotFound({ message: `Agent ${id} not found` })),
    createAgentVersion: (id, input) => {
      const agent = agents.get(id)
      if (agent === undefined) return Effect.fail(new NotFound({ message: `Agent ${id} not found` }))
      if (agent.versions.some((v) => v.version === input.version)) {
        return Effect.fail(new Conflict({ message: `Version ${input.version} exists` }))
      }
      const version: AgentVersion = { agentId: id, version: input.version, config: input.config ?? {}, createdAt: new Date().toISOString() }
      agents.set(id, { ...agent, versions: [...agent.versions, version] })
      return Effect.succeed(version)
    },
    // Decision links are the embedded store's (test/links/); this fake makes none.
    createDecisionLinksFor: () => Effect.fail(new BadRequest({ message: "no links here" })),
    revokeDecisionLinksFor: () => Effect.succeed({ revoked: 0 })
  }
}

describe("workspace server with extras", () => {
  it.live("the GL webhook completes a connect session: the connection becomes ACTIVE", () => {
    return withServer(
      overStore(contractFixture(), (memory) => workspaceServer(memory, fakeExtras(memory))),
      Effect.gen(function*() {
        const session = yield* json("POST", `/workspace/tenants/${ID.tenantB}/gl/sessions`, { serviceId: "xero" })
        expect(session.status).toBe(201)
        const done = yield* json("POST", "/workspace/gl/webhook/success", { consumerId: session.body.consumerId, service: "xero" })
        expect(done.status).toBe(204)
        const gl = yield* raw("GET", `/workspace/tenants/${ID.tenantB}/gl`)
        expect(gl.body.connection).toMatchObject({ tenantId: ID.tenantB, status: "ACTIVE", service: "xero" })
        const reused = yield* json("POST", "/workspace/gl/webhook/success", { consumerId: session.body.consumerId, service: "xero" })
        expect(reused.status).toBe(404)
        const bad = yield* json("POST", "/workspace/gl/webhook/success", { consumerId: "" })
        expect(bad.status).toBe(400)
      })
    )
  })

  it.live("registry routes delegate: create returns the key once, list/get never show it, versions, delete", () => {
    return withServer(
      overStore(contractFixture(), (memory) => workspaceServer(memory, fakeExtras(memory))),
      Effect.gen(function*() {
        const created = yield* json("POST", "/workspace/registry/agents", {
          kind: "claude", externalRef: "agent_1", tenantSlug: "alpha", name: "Reconciler"
        })
        expect(created.status).toBe(201)
        expect(created.body).toMatchObject({ kind: "claude", externalRef: "claude://agent_1", tenantId: ID.tenantA, apiKey: "ak_secret" })
        const id = created.body.id as string
        const listed = yield* raw("GET", `/workspace/registry/agents?tenantId=${ID.tenantA}`)
        expect(listed.body.map((a: Agent) => a.id)).toEqual([id])
        expect(JSON.stringify(listed.body)).not.toContain("apiKey")
        expect((yield* raw("GET", `/workspace/registry/agents?tenantId=${ID.tenantB}`)).body).toEqual([])
        const got = yield* raw("GET", `/workspace/registry/agents/${id}`)
        expect(got.body).not.toHaveProperty("apiKey")
        const v1 = yield* json("POST", `/workspace/registry/agents/${id}/versions`, { version: "1.0", config: { model: "x" } })
        expect(v1.status).toBe(201)
        expect(v1.body).toMatchObject({ agentId: id, version: "1.0", config: { model: "x" } })
        expect((yield* json("POST", `/workspace/registry/agents/${id}/versions`, { version: "1.0" })).status).toBe(409)
        expect((yield* raw("GET", `/workspace/registry/agents/${id}`)).body.versions).toHaveLength(1)
        expect((yield* raw("DELETE", `/workspace/registry/agents/${id}`)).status).toBe(204)
        expect((yield* raw("GET", `/workspace/registry/agents/${id}`)).status).toBe(404)
        const noTenant = yield* json("POST", "/workspace/registry/agents", { kind: "claude", externalRef: "a", name: "n" })
        expect(noTenant.status).toBe(400)
        expect(noTenant.body.message).toContain("tenant")
      })
    )
  })
})

describe("makeWorkspaceHttpApp", () => {
  it.live("mounts under /workspace beside another app's routes", () => {
    // The app answers the whole /workspace path (its routes include the prefix).
    const server = overStore(contractFixture(), (memory) =>
      Layer.unwrap(
        Effect.map(makeWorkspaceHttpApp(memory, fakeExtras(memory)), (app) =>
          HttpRouter.serve(
            Layer.mergeAll(
              HttpRouter.add("GET", "/v1/health", HttpServerResponse.jsonUnsafe({ status: "ok" })),
              HttpRouter.add("*", "/workspace/*", app)
            ),
            { disableLogger: true, disableListenLog: true }
          ))
      ).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))))
    return withServer(
      server,
      Effect.gen(function*() {
        expect((yield* raw("GET", "/v1/health")).body).toEqual({ status: "ok" })
        expect((yield* raw("GET", "/workspace/tenants/by-slug/alpha")).body).toMatchObject({ id: ID.tenantA })
        expect((yield* raw("GET", "/workspace/openapi.json")).body.info.title).toBe("Workspace service")
        const missing = yield* raw("GET", `/workspace/tasks/${ID.missing}`)
        expect(missing.status).toBe(404)
        expect(missing.body).toMatchObject({ statusCode: 404, error: "Not Found" })
        expect((yield* json("POST", "/workspace/registry/agents", { kind: "claude", externalRef: "a", tenantSlug: "alpha", name: "n" })).status)
          .toBe(201)
      })
    )
  })
})
