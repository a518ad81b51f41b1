/**
 * A known path asked with a method it does not take answers 405 with `Allow` (RFC 9110
 * §15.5.6), derived from the HttpApi definition; an unknown path stays 404; HEAD is answered
 * wherever GET is; OPTIONS (no CORS yet) is a 405 too, never a 500.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../../src/api/Api.js"
import { allowOf, explainUnrouted, matchPath, templatesOf } from "../../src/http/errors/unrouted.js"
import { WorkspaceApi } from "../../src/upstream/WorkspaceApi.js"
import { overStore } from "../support/storeWorkspace.js"
import { withGateway } from "../support/gateway.js"
import { ACME_US, DOCUMENT, EXPENSE_TASK, ROW_NEEDS_ATTENTION } from "../support/world.js"
import { workspaceServer } from "../workspace/httpHarness.js"
import { contractFixture, ID } from "../workspace/contractFixture.js"
import { errorBody, send } from "./support.js"

const T = EXPENSE_TASK
const ROW = ROW_NEEDS_ATTENTION

/** Spec §4, path by path: the methods each takes (HEAD wherever GET is). */
const SPEC_PATHS: ReadonlyArray<readonly [path: string, allow: string]> = [
  ["/v1/health", "GET, HEAD"],
  ["/v1/entities", "GET, HEAD"],
  [`/v1/entities/${ACME_US}/tasks`, "GET, HEAD, POST"],
  [`/v1/entities/${ACME_US}/workflows`, "GET, HEAD"],
  [`/v1/tasks/${T}/ui`, "GET, HEAD"],
  [`/v1/tasks/${T}/snapshots`, "GET, HEAD"],
  [`/v1/tasks/${T}/action`, "POST"],
  [`/v1/tasks/${T}/row-action`, "POST"],
  [`/v1/tasks/${T}/events`, "GET, HEAD, POST"],
  [`/v1/tasks/${T}/files`, "GET, HEAD, POST"],
  [`/v1/tasks/${T}/files/ingest`, "POST"],
  [`/v1/tasks/${T}/files/${DOCUMENT}/download`, "GET, HEAD"],
  [`/v1/tasks/${T}/data/ingest`, "POST"],
  [`/v1/subledgers/expenses/${ROW}/reject`, "POST"],
  [`/v1/subledgers/expenses/${ROW}`, "PATCH"],
  ["/v1/gl/status", "GET, HEAD"],
  ["/v1/gl/connect/session", "POST"],
  ["/v1/gl", "DELETE"]
]

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/**
 * JSON bodies the body checks refuse (src/http/input/jsonInput.ts): malformed, an unpaired
 * surrogate, nesting past the depth limit, a number no float holds, a raw control character.
 */
const REFUSED_BODIES: ReadonlyArray<string> = [
  `{"name":`,
  `{"name":"\\udc00"}`,
  `${"[".repeat(200)}${"]".repeat(200)}`,
  `{"n":9007199254740993}`,
  `{"name":"a\u0001b"}`
]

describe("405 Method Not Allowed with Allow", () => {
  it.effect("the event stream takes GET (and HEAD) only", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const method of METHODS.filter((m) => m !== "GET")) {
          const res = yield* send(method, `/v1/tasks/${T}/events/stream`)
          expect(res.status, method).toBe(405)
          expect(res.headers["allow"]).toBe("GET, HEAD")
        }
      })
    ))

  it.effect("every spec path, every method it does not take: 405, Allow listing exactly what it takes", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [path, allow] of SPEC_PATHS) {
          for (const method of METHODS.filter((m) => !allow.split(", ").includes(m))) {
            const res = yield* send(method, path)
            expect(res.status, `${method} ${path}`).toBe(405)
            expect(res.headers["allow"], `${method} ${path}`).toBe(allow)
            expect(res.headers["content-type"]).toMatch(/application\/json/)
            expect(res.body).toEqual(errorBody(405, "Method Not Allowed"))
            expect(res.body.message).toContain(method)
            expect(res.body.message).toContain(allow)
          }
        }
      })
    ))

  it.effect("the methods a path takes are never answered 405 (nor a routing 404)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [path, allow] of SPEC_PATHS) {
          for (const method of allow.split(", ")) {
            const res = yield* send(method, path, method === "GET" || method === "HEAD" ? {} : {
              headers: { "content-type": "application/json" },
              body: "{}"
            })
            expect(res.status, `${method} ${path}`).not.toBe(405)
            expect(res.body?.message ?? "", `${method} ${path}`).not.toMatch(/^Cannot /)
          }
        }
      })
    ))

  it.effect("a body the JSON checks refuse does not hide the 405: the method is judged first, as without a body", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const body of REFUSED_BODIES) {
          for (const [path, allow] of SPEC_PATHS) {
            for (const method of ["PUT", "PATCH", "DELETE", "POST"].filter((m) => !allow.split(", ").includes(m))) {
              const res = yield* send(method, path, { headers: { "content-type": "application/json" }, body })
              expect(res.status, `${method} ${path} ${body.slice(0, 40)}`).toBe(405)
              expect(res.headers["allow"], `${method} ${path}`).toBe(allow)
              expect(res.body).toEqual(errorBody(405, "Method Not Allowed"))
            }
          }
          // Where the method is taken, the same body is the 400 it was.
          const taken = yield* send("POST", `/v1/tasks/${T}/events`, { headers: { "content-type": "application/json" }, body })
          expect(taken.status, body.slice(0, 40)).toBe(400)
          expect(taken.body).toEqual(errorBody(400, "Bad Request"))
        }
      })
    ))

  it.effect("HEAD on a GET route: the GET answer's status and headers, no body", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const get = yield* send("GET", "/v1/entities")
        const head = yield* send("HEAD", "/v1/entities")
        expect(head.status).toBe(200)
        expect(head.text).toBe("")
        expect(head.headers["content-type"]).toBe(get.headers["content-type"])
        // A path the API does not have: 404 for HEAD too.
        expect((yield* send("HEAD", "/v1/nope")).status).toBe(404)
      })
    ))

  it.effect("a method Node knows but the API never uses (PROPFIND, TRACE): 405 too", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const method of ["PROPFIND", "TRACE", "PURGE"]) {
          const res = yield* send(method, "/v1/entities")
          expect(res.status, method).toBe(405)
          expect(res.headers["allow"]).toBe("GET, HEAD")
        }
      })
    ))

  it.effect("unknown paths stay 404, trailing and duplicate slashes and case as the router sees them", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const path of ["/v1/nope", "/v2/entities", `/v1/tasks/${T}`, `/v1/tasks/${T}/ui/extra`, "/nope"]) {
          const res = yield* send("PUT", path)
          expect(res.status, path).toBe(404)
          expect(res.body).toEqual(errorBody(404, "Not Found"))
        }
        // The router ignores a trailing slash, duplicate slashes, case and the query, and takes any
        // first character as `/` (`*v1/entities`): so does Allow.
        for (const path of ["/v1/entities/", "//v1//entities", "/V1/Entities", "/v1/entities?x=1", "*v1/entities"]) {
          const res = yield* send("PUT", path)
          expect(res.status, path).toBe(405)
          expect(res.headers["allow"]).toBe("GET, HEAD")
          // GET takes no query parameters there: an unknown one is a 400 naming it.
          expect((yield* send("GET", path)).status, path).toBe(path.includes("?") ? 400 : 200)
        }
      })
    ))

  it.effect("the routes served beside the API (console, docs, probes, metrics) answer a method they do not take with 405 and Allow", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const path of ["/", "/console/app.js", "/docs", "/openapi.json", "/readyz", "/metrics", "/READYZ", "/metrics/"]) {
          for (const method of ["POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
            const res = yield* send(method, path)
            expect(res.status, `${method} ${path}`).toBe(405)
            expect(res.headers["allow"], `${method} ${path}`).toBe("GET, HEAD")
            expect(res.body).toEqual(errorBody(405, "Method Not Allowed"))
          }
          // With a body the checks would refuse, too: the method is judged first.
          const refused = yield* send("POST", path, { headers: { "content-type": "application/json" }, body: REFUSED_BODIES[0]! })
          expect(refused.status, path).toBe(405)
          expect((yield* send("GET", path)).status, path).not.toBe(405)
        }
        // A console file that is not there: a 404 for GET, a 405 for a write (the path is the console's).
        expect((yield* send("GET", "/console/nope.js")).status).toBe(404)
        // The agent tool server takes every method (its own answers say what it makes of them).
        for (const method of ["GET", "POST", "PUT", "DELETE"]) expect((yield* send(method, "/mcp")).status, method).not.toBe(405)
      })
    ))

  it.effect("a path no route has is a 404 whatever its body: refused JSON, another media type, a content coding", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const path of ["/nope", "/v1/nope", "/v2/entities", `/v1/tasks/${T}/ui/extra`, "/console", "/console/a/b"]) {
          for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
            for (const body of REFUSED_BODIES) {
              const res = yield* send(method, path, { headers: { "content-type": "application/json" }, body })
              expect(res.status, `${method} ${path} ${body.slice(0, 20)}`).toBe(404)
              expect(res.body).toEqual(errorBody(404, "Not Found"))
            }
            const text = yield* send(method, path, { headers: { "content-type": "text/plain" }, body: "hello" })
            expect(text.status, `${method} ${path} text/plain`).toBe(404)
            const gzip = yield* send(method, path, { headers: { "content-type": "application/json", "content-encoding": "gzip" }, body: "{}" })
            expect(gzip.status, `${method} ${path} gzip`).toBe(404)
          }
        }
        // Spellings the router cannot route are no route here either: an absolute-form target it
        // does not strip (an upper-case scheme with a port the adapter cannot parse), a parameter
        // before the last segment whose lower case is longer (the router's offsets slip: `İ`).
        for (const path of ["HTTP://x:99999/readyz", "HTTP://x:99999/v1/entities", "/v1/tasks/%C4%B0/ui", "/v1/tasks/%C4%B0/action"]) {
          for (const method of ["GET", "POST"]) {
            const res = yield* send(method, path, { headers: { "content-type": "text/plain" }, body: "x" })
            expect(res.status, `${method} ${path}`).toBe(404)
          }
        }
        // The agent tool server takes POST: another method is its own 405 (or 401 without a key), whatever the body.
        for (const method of ["PUT", "DELETE", "PATCH"]) {
          const res = yield* send(method, "/mcp", { headers: { "content-type": "application/json" }, body: REFUSED_BODIES[0]! })
          expect(res.status, method).toBe(401)
        }
        // Where a route takes the method, the body checks still answer first: /mcp's JSON is checked.
        const mcp = yield* send("POST", "/mcp", { headers: { "content-type": "application/json" }, body: REFUSED_BODIES[0]! })
        expect(mcp.status).toBe(400)
        expect((yield* send("POST", "/mcp", { headers: { "content-type": "text/plain" }, body: "x" })).status).toBe(415)
      })
    ))

  it.effect("the 405 message quotes a long path only in part", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* send("DELETE", `/v1/tasks/${T}:${"x".repeat(1500)}:y/ui`)
        expect(res.status).toBe(405)
        expect(res.text.length).toBeLessThan(512)
      })
    ))

  it.effect("workspace API: the same, from WorkspaceApi's own definition", () =>
    Effect.provide(
      Effect.gen(function*() {
        const res = yield* send("PUT", `/workspace/tenants/${ID.tenantA}/gl`)
        expect(res.status).toBe(405)
        expect(res.headers["allow"]).toBe("GET, HEAD, DELETE")
        expect(res.body).toEqual(errorBody(405, "Method Not Allowed"))
        expect((yield* send("GET", "/workspace/registry/agents/x/versions")).headers["allow"]).toBe("POST")
        // A body the JSON checks refuse does not hide it (a random seed of the contract's property test).
        for (const body of REFUSED_BODIES) {
          const refused = yield* send("PUT", "/workspace/webhooks", { headers: { "content-type": "application/json" }, body })
          expect(refused.status, body.slice(0, 40)).toBe(405)
          expect(refused.body).toEqual(errorBody(405, "Method Not Allowed"))
        }
        expect((yield* send("PUT", "/workspace/nope")).status).toBe(404)
        // Its docs beside it: 405 for a write; a path it does not have: 404 whatever the body.
        for (const path of ["/workspace/openapi.json", "/workspace/docs"]) {
          const res = yield* send("POST", path, { headers: { "content-type": "application/json" }, body: REFUSED_BODIES[0]! })
          expect(res.status, path).toBe(405)
          expect(res.headers["allow"], path).toBe("GET, HEAD")
        }
        for (const body of REFUSED_BODIES) {
          expect((yield* send("POST", "/workspace/nope", { headers: { "content-type": "application/json" }, body })).status).toBe(404)
        }
        // A gateway path is not a workspace path.
        expect((yield* send("PUT", "/v1/entities")).status).toBe(404)
      }),
      overStore(contractFixture(), (ws) => workspaceServer(ws))
    ))
})

describe("methodNotAllowed: matching an HttpApi's path templates", () => {
  it("lists every endpoint of the API with the prefix applied", () => {
    const templates = templatesOf(GatewayApi)
    // One template per (method, path) of the spec's tables, plus the live event stream, the inbox,
    // the caller (/v1/me), the claim's POST and DELETE, and the raw upload.
    const specEndpoints = SPEC_PATHS.flatMap(([, allow]) => allow.split(", ").filter((m) => m !== "HEAD"))
    expect(templates).toHaveLength(specEndpoints.length + 6)
    expect(templates.map((t) => `${t.method} ${t.path}`)).toEqual(expect.arrayContaining([
      "GET /v1/inbox", "GET /v1/me", "POST /v1/tasks/:taskId/claim", "DELETE /v1/tasks/:taskId/claim",
      "POST /v1/tasks/:taskId/files/raw"
    ]))
    expect(templates.map((t) => `${t.method} ${t.path}`)).toContain("GET /v1/tasks/:taskId/events/stream")
    expect(templates.every((t) => t.path.startsWith("/v1/"))).toBe(true)
    expect(templatesOf(WorkspaceApi).every((t) => t.path.startsWith("/workspace/"))).toBe(true)
  })

  it("matches parameters by segment, decoding them", () => {
    const matches = matchPath(GatewayApi, `/v1/tasks/a%3Ab%3Ac/files/d/download?x=1`)
    expect(matches.map((m) => `${m.method} ${m.path}`)).toEqual(["GET /v1/tasks/:taskId/files/:documentRef/download"])
    expect(matches[0]!.params).toEqual([["taskId", "a:b:c"], ["documentRef", "d"]])
    expect(allowOf(matchPath(GatewayApi, "/v1/tasks/t/events"))).toEqual(["GET", "HEAD", "POST"])
    expect(matchPath(GatewayApi, "/v1/tasks/t")).toEqual([])
  })

  it("explains an unrouted request: not found, method not allowed, or a parameter over the router's limit", () => {
    expect(explainUnrouted(GatewayApi, "GET", "/v1/nope", 100)).toEqual({ _tag: "NotFound" })
    expect(explainUnrouted(GatewayApi, "PUT", "/v1/gl", 100)).toEqual({ _tag: "MethodNotAllowed", allow: ["DELETE"] })
    expect(explainUnrouted(GatewayApi, "GET", `/v1/tasks/${"a".repeat(101)}/ui`, 100)).toEqual({
      _tag: "ParamTooLong",
      name: "taskId",
      length: 101
    })
    expect(explainUnrouted(GatewayApi, "HEAD", `/v1/tasks/${"a".repeat(101)}/ui`, 100)._tag).toBe("ParamTooLong")
    expect(explainUnrouted(GatewayApi, "GET", `/v1/tasks/${"a".repeat(100)}/ui`, 100)).toEqual({ _tag: "NotFound" })
  })
})
