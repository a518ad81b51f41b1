/**
 * What only the HTTP WorkspaceClient does: timeouts, retries of idempotent calls only, error
 * mapping, connection reuse and streamed downloads. (The contract itself runs on the HTTP client
 * over the workspace server in ./contract.embedded.test.ts.)
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Stream from "effect/Stream"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { withIdempotencyKey, WorkspaceClient, type WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import { DOCUMENT_HEADER } from "../../src/upstream/documents.js"
import { HttpWorkspaceClientLive } from "../../src/workspace/http/client.js"
import { testStore } from "../support/storeWorkspace.js"
import { contractFixture, ID } from "./contractFixture.js"
import { clientOf, workspaceServer } from "./httpHarness.js"

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void

/** A hand-written upstream on loopback, counting requests per method and connections. */
const rawUpstream = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.callback<
      { url: string; server: Server; hits: Array<string>; keys: Array<string | undefined>; connections: () => number }
    >((resume) => {
      const hits: Array<string> = []
      const keys: Array<string | undefined> = []
      let connections = 0
      const server = createServer((req, res) => {
        hits.push(`${req.method} ${req.url}`)
        keys.push(req.headers["idempotency-key"] as string | undefined)
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => handler(req, res, Buffer.concat(chunks)))
      })
      server.on("connection", () => connections++)
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, server, hits, keys, connections: () => connections }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.result(effect), (e) =>
    Result.isFailure(e) ? Effect.succeed(e.failure) : Effect.die(new Error(`expected a failure, got ${JSON.stringify(e.success)}`)))

/** Runs `f` with an HTTP WorkspaceClient for `url`. */
const withClient = <A, E>(
  url: string,
  options: { timeoutMs: number; retries: number; retryBaseMs?: number; deadlineMs?: number },
  f: (ws: WorkspaceClientService) => Effect.Effect<A, E>
) =>
  Effect.flatMap(WorkspaceClient, f).pipe(
    Effect.provide(HttpWorkspaceClientLive(url, { retryBaseMs: 5, ...options })),
    // The client logs each upstream failure as a warning; these tests provoke them on purpose.
    Effect.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  )

const task = {
  id: ID.taskUpload, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: "w", title: "t", status: "IN_PROGRESS",
  priority: "HIGH", createdAt: "2026-11-01T09:00:00.000Z", currentStep: null
}

describe("HTTP WorkspaceClient", () => {
  it.live("a call that outlives the timeout is a 504", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream(() => {/* never answers */})
      const error = yield* failureOf(withClient(upstream.url, { timeoutMs: 150, retries: 0 }, (ws) => ws.listEntities(ID.tenantA)))
      expect(error).toMatchObject({ _tag: "GatewayTimeout", statusCode: 504 })
      expect(upstream.hits).toHaveLength(1)
    }).pipe(Effect.scoped))

  it.live("a timed-out call is retried, a write with the same idempotency key on every attempt", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream(() => {/* never answers */})
      // Each call's own budget (no request's deadline here) was the attempts' 900 ms and 40 ms of
      // backoffs: on a loaded machine the third attempt did not fit. The last attempt takes what
      // is left of 1.5 s.
      yield* withClient(upstream.url, { timeoutMs: 300, retries: 2, deadlineMs: 1_500 }, (ws) =>
        Effect.gen(function*() {
          expect(yield* failureOf(ws.getTask(ID.taskUpload))).toMatchObject({ _tag: "GatewayTimeout" })
          expect(upstream.hits.filter((h) => h.startsWith("GET"))).toHaveLength(3)
          expect(upstream.keys.slice(0, 3)).toEqual([undefined, undefined, undefined])
          expect(yield* failureOf(ws.signal(ID.tenantA, { taskId: ID.taskUpload, name: "approve", payload: {} })))
            .toMatchObject({ _tag: "GatewayTimeout" })
          expect(upstream.hits.filter((h) => h.startsWith("POST"))).toHaveLength(3)
          const keys = upstream.keys.slice(3)
          expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
          expect(new Set(keys).size).toBe(1)
          // The request's key when there is one (the gateway's middleware sets it).
          yield* Effect.flip(withIdempotencyKey("client-key-1")(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: "w", context: {} })))
          expect(upstream.keys.slice(6)).toEqual(["client-key-1", "client-key-1", "client-key-1"])
        }))
    }).pipe(Effect.scoped))

  it.live("an unreachable workspace (connection refused) is a 503", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream(() => {})
      const url = upstream.url
      yield* Effect.callback<void>((resume) => {
        upstream.server.close(() => resume(Effect.void))
      })
      const error = yield* failureOf(withClient(url, { timeoutMs: 2000, retries: 1 }, (ws) => ws.resolveTenant("alpha")))
      expect(error).toMatchObject({ _tag: "ServiceUnavailable", statusCode: 503 })
      expect(error.message).toBe("The workspace service is unreachable")
      const post = yield* failureOf(withClient(url, { timeoutMs: 2000, retries: 1 }, (ws) => ws.createGlSession(ID.tenantA, undefined)))
      expect(post).toMatchObject({ _tag: "ServiceUnavailable" })
    }).pipe(Effect.scoped))

  it.live("an upstream 5xx is a 502: a plain-text 500 and a spec-shaped 503 with its message", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((req, res) => {
        if (req.url!.includes("/entities")) {
          res.writeHead(500, { "content-type": "text/plain" })
          res.end("boom")
        } else json(res, 503, { statusCode: 503, message: "database is down", error: "Service Unavailable" })
      })
      yield* withClient(upstream.url, { timeoutMs: 2000, retries: 0 }, (ws) =>
        Effect.gen(function*() {
          expect(yield* failureOf(ws.listEntities(ID.tenantA))).toMatchObject({ _tag: "BadGateway", statusCode: 502 })
          const shaped = yield* failureOf(ws.getTask(ID.taskUpload))
          expect(shaped).toMatchObject({ _tag: "BadGateway" })
          expect(shaped.message).toContain("database is down")
        }))
    }).pipe(Effect.scoped))

  it.live("every call is retried with backoff: reads, and writes (they carry an idempotency key)", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((_req, res) => json(res, 500, { statusCode: 500, message: "x", error: "Internal Server Error" }))
      const count = (prefix: string) => upstream.hits.filter((h) => h.startsWith(prefix)).length
      yield* withClient(upstream.url, { timeoutMs: 2000, retries: 3 }, (ws) =>
        Effect.gen(function*() {
          expect(yield* failureOf(ws.listTasks(ID.tenantA, ID.entityA1))).toMatchObject({ _tag: "BadGateway" })
          expect(count("GET")).toBe(4)
          expect(yield* failureOf(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: "w", context: {} })))
            .toMatchObject({ _tag: "BadGateway" })
          expect(yield* failureOf(ws.ingestData(ID.tenantA, { taskId: ID.taskUpload, rows: [{ data: {} }] }, Option.none())))
            .toMatchObject({ _tag: "BadGateway" })
          expect(yield* failureOf(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds))).toMatchObject({ _tag: "BadGateway" })
          expect(count("POST")).toBe(3 * 4)
          expect(yield* failureOf(ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "merchant", "x")))
            .toMatchObject({ _tag: "BadGateway" })
          expect(count("PATCH")).toBe(4)
          expect(yield* failureOf(ws.appendEvent(ID.tenantA, ID.taskUpload, { type: "t", source: "s", seq: 1, payload: {} })))
            .toMatchObject({ _tag: "BadGateway" })
          expect(count("POST")).toBe(4 * 4)
          expect(yield* failureOf(ws.deleteGlConnection(ID.tenantA))).toMatchObject({ _tag: "BadGateway" })
          expect(count("DELETE")).toBe(4)
        }))
    }).pipe(Effect.scoped))

  it.live("a retried GET succeeds once the upstream recovers", () =>
    Effect.gen(function*() {
      let calls = 0
      const upstream = yield* rawUpstream((_req, res) => {
        calls++
        if (calls < 3) json(res, 503, { statusCode: 503, message: "warming up", error: "Service Unavailable" })
        else json(res, 200, task)
      })
      const got = yield* withClient(upstream.url, { timeoutMs: 2000, retries: 3 }, (ws) => ws.getTask(ID.taskUpload))
      expect(got.id).toBe(ID.taskUpload)
      expect(upstream.hits).toHaveLength(3)
    }).pipe(Effect.scoped))

  it.live("upstream 404/400/409 keep their message and extra fields; undeclared statuses and bad bodies are 502", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((req, res) => {
        const url = req.url!
        if (url.startsWith("/workspace/tasks/")) return json(res, 404, { statusCode: 404, message: "Task gone", error: "Not Found" })
        if (url.includes("/reject")) {
          return json(res, 400, { statusCode: 400, message: "Row cannot be rejected", error: "Bad Request", currentStatus: "REJECTED" })
        }
        if (url.includes("/subledgers/")) {
          return json(res, 400, { statusCode: 400, message: "Field x", error: "Bad Request", code: "INVALID_FIELD" })
        }
        if (url.includes("/events")) return json(res, 409, { statusCode: 409, message: "seq taken", error: "Conflict" })
        if (url.endsWith("/entities")) return json(res, 404, { statusCode: 404, message: "nope", error: "Not Found" })
        if (url.includes("/workflows")) {
          res.writeHead(200, { "content-type": "text/html" })
          return res.end("<html>proxy login</html>")
        }
        if (url.includes("/next-step")) return json(res, 200, { step: "not a step" })
        json(res, 418, { teapot: true })
      })
      yield* withClient(upstream.url, { timeoutMs: 2000, retries: 0 }, (ws) =>
        Effect.gen(function*() {
          expect(yield* failureOf(ws.getTask(ID.taskUpload))).toMatchObject({ _tag: "NotFound", statusCode: 404, message: "Task gone" })
          expect(yield* failureOf(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))
            .toMatchObject({ _tag: "BadRequest", message: "Row cannot be rejected", currentStatus: "REJECTED" })
          expect(yield* failureOf(ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "x", 1)))
            .toMatchObject({ _tag: "BadRequest", message: "Field x", code: "INVALID_FIELD" })
          expect(yield* failureOf(ws.appendEvent(ID.tenantA, ID.taskUpload, { type: "t", source: "s", seq: 1, payload: {} })))
            .toMatchObject({ _tag: "Conflict", message: "seq taken" })
          // listEntities cannot answer 404 by contract.
          expect(yield* failureOf(ws.listEntities(ID.tenantA))).toMatchObject({ _tag: "BadGateway" })
          expect(yield* failureOf(ws.listWorkflows(ID.tenantA))).toMatchObject({ _tag: "BadGateway" })
          expect(yield* failureOf(ws.getNextStep(ID.tenantA, ID.taskUpload))).toMatchObject({ _tag: "BadGateway" })
          expect(yield* failureOf(ws.getGlConnection(ID.tenantA))).toMatchObject({ _tag: "BadGateway" })
        }))
    }).pipe(Effect.scoped))

  it.live("getNextSteps is one HTTP call per 500 ids, answered per task", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((_req, res, body) => {
        const { taskIds } = JSON.parse(body.toString()) as { taskIds: Array<string> }
        json(res, 200, taskIds.map((taskId) => ({ taskId, nextStep: taskId === "bad" ? null : { step: null, steps: [] } })))
      })
      const asked = Array.from({ length: 501 }, (_, i) => i === 7 ? "bad" : `task-${i}`)
      const answers = yield* withClient(upstream.url, { timeoutMs: 2000, retries: 0 }, (ws) =>
        Effect.zip(ws.getNextSteps(ID.tenantA, asked.slice(0, 50)), ws.getNextSteps(ID.tenantA, asked)))
      expect(upstream.hits).toEqual(Array.from({ length: 3 }, () => `POST /workspace/tenants/${ID.tenantA}/next-steps`))
      expect(answers[0].map((a) => a.taskId)).toEqual(asked.slice(0, 50))
      expect(answers[1].map((a) => a.taskId)).toEqual(asked)
      expect(answers[1].filter((a) => a.nextStep === null).map((a) => a.taskId)).toEqual(["bad"])
    }).pipe(Effect.scoped))

  it.live("calls reuse one keep-alive connection", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((_req, res) => json(res, 200, []))
      yield* withClient(upstream.url, { timeoutMs: 2000, retries: 0 }, (ws) =>
        Effect.repeat(ws.listEntities(ID.tenantA), { times: 9 }))
      expect(upstream.hits).toHaveLength(10)
      expect(upstream.connections()).toBe(1)
    }).pipe(Effect.scoped))

  it.live("downloads stream: the first chunk arrives before the upstream has sent the rest; a stall is a 504", () =>
    Effect.gen(function*() {
      const document = {
        id: ID.docNew, tenantId: ID.tenantA, taskId: ID.taskReview, source: "s", filename: "big.bin",
        contentType: "application/octet-stream", sizeBytes: 2 * 65536, uploadedAt: "2026-10-02T10:00:00.000Z"
      }
      const upstream = yield* rawUpstream((_req, res) => {
        res.writeHead(200, {
          "content-type": document.contentType,
          "content-length": String(document.sizeBytes),
          [DOCUMENT_HEADER]: encodeURIComponent(JSON.stringify(document))
        })
        res.write(Buffer.alloc(65536, 1))
        // ...and the second half never comes.
      })
      yield* withClient(upstream.url, { timeoutMs: 300, retries: 0 }, (ws) =>
        Effect.scoped(Effect.gen(function*() {
          const opened = yield* ws.openDocument(ID.tenantA, ID.docNew)
          expect(opened.document).toEqual(document)
          let received = 0
          const error = yield* failureOf(Stream.runForEach(opened.body, (chunk) => Effect.sync(() => (received += chunk.length))))
          // Half the body was handed on while the upstream still held the rest.
          expect(received).toBe(65536)
          expect(error).toMatchObject({ _tag: "GatewayTimeout" })
        })))
    }).pipe(Effect.scoped))

  it.live("a download without the document header is a 502; a 404 keeps its message", () =>
    Effect.gen(function*() {
      const upstream = yield* rawUpstream((req, res) => {
        if (req.url!.includes(ID.missing)) return json(res, 404, { statusCode: 404, message: "Document gone", error: "Not Found" })
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("hello")
      })
      yield* withClient(upstream.url, { timeoutMs: 2000, retries: 0 }, (ws) =>
        Effect.scoped(Effect.gen(function*() {
          expect(yield* failureOf(ws.openDocument(ID.tenantA, ID.missing))).toMatchObject({ _tag: "NotFound", message: "Document gone" })
          expect(yield* failureOf(ws.openDocument(ID.tenantA, ID.docNew))).toMatchObject({ _tag: "BadGateway" })
        })))
    }).pipe(Effect.scoped))

  it.live("a real server behind the client: upstream messages come through unchanged", () =>
    Effect.gen(function*() {
      const memory = yield* testStore(contractFixture())
      const local = yield* failureOf(memory.getNextStep(ID.tenantA, ID.taskLegacy))
      const remote = yield* failureOf(Effect.flatMap(WorkspaceClient, (ws) => ws.getNextStep(ID.tenantA, ID.taskLegacy)).pipe(
        Effect.provide(clientOf(workspaceServer(memory)))
      ))
      expect(remote).toEqual(local)
    }).pipe(Effect.scoped))
})
