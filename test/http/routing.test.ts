/**
 * Path parameters the router must route: composite task ids well past find-my-way's default
 * maxParamLength (100), up to TaskId's documented maximum, on the gateway and on the workspace
 * API; past that maximum a 400 naming the parameter, never a routing 404. And malformed
 * percent-encoding in the path: a 400 saying so.
 */
import { describe, expect, it } from "@effect/vitest"
import * as HttpRouter from "effect/http/HttpRouter"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"
import { TASK_ID_MAX_LENGTH, TaskId } from "../../src/api/ids.js"
import { malformedPercentEncoding } from "../../src/http/errors/percentEncoding.js"
import { MAX_PATH_PARAM_LENGTH } from "../../src/http/server/ServerLimits.js"
import { makeWorkspaceHttpApp } from "../../src/workspace/server/server.js"
import { overStore } from "../support/storeWorkspace.js"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"
import { workspaceServer } from "../workspace/httpHarness.js"
import { contractFixture, ID } from "../workspace/contractFixture.js"
import { errorBody, send } from "./support.js"

/** A nested composite id of exactly `length` characters rooted at `root`. */
const compositeOf = (root: string, length: number): string => {
  let id = root
  let i = 0
  while (id.length < length) id += `:step${i}:${"s".repeat(40)}${i++}`
  const cut = id.slice(0, length)
  // Keep it well-formed: an even number of segments after the root, none empty.
  const parts = cut.split(":")
  if ((parts.length - 1) % 2 === 1 || parts[parts.length - 1] === "") {
    return `${root}:${"a".repeat(Math.max(1, length - root.length - 3))}:b`.slice(0, length)
  }
  return cut
}

describe("composite task ids route up to TASK_ID_MAX_LENGTH", () => {
  it("the id helper makes valid ids of the exact length", () => {
    for (const n of [101, 500, 1024, TASK_ID_MAX_LENGTH]) {
      const id = compositeOf(EXPENSE_TASK, n)
      expect(id).toHaveLength(n)
      expect(Schema.is(TaskId)(id)).toBe(true)
    }
    expect(Schema.is(TaskId)(compositeOf(EXPENSE_TASK, TASK_ID_MAX_LENGTH + 1))).toBe(false)
  })

  it("the router takes parameters longer than any path schema allows, so the schemas decide", () => {
    expect(TASK_ID_MAX_LENGTH).toBeGreaterThanOrEqual(1024)
    expect(MAX_PATH_PARAM_LENGTH).toBeGreaterThan(TASK_ID_MAX_LENGTH)
  })

  it.effect("gateway: ids of 101, 1024 and TASK_ID_MAX_LENGTH characters reach the handlers", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const n of [101, 1024, TASK_ID_MAX_LENGTH]) {
          const id = compositeOf(EXPENSE_TASK, n)
          const events = yield* raw("GET", `/v1/tasks/${id}/events`)
          expect(events.status, `GET events, ${n} characters`).toBe(200)
          expect(events.body).toEqual({ events: [] })
          // Same for a route with a second parameter after the id, and one with a body.
          const download = yield* raw("GET", `/v1/tasks/${id}/files/00000000-0000-4000-8000-000000000000/download`)
          expectError(download, 404, "Not Found")
          expect(download.body.message).not.toMatch(/^Cannot /)
          const action = yield* raw("POST", `/v1/tasks/${id}/action`, { type: "maybe" })
          expectError(action, 400, "Bad Request", "type")
        }
      })
    ))

  it.effect("gateway: one character over TASK_ID_MAX_LENGTH is a 400 naming taskId, not a 404", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const id = compositeOf(EXPENSE_TASK, TASK_ID_MAX_LENGTH + 1)
        const res = yield* raw("GET", `/v1/tasks/${id}/ui`)
        expectError(res, 400, "Bad Request", "taskId")
        expect(res.body.message).toContain(String(TASK_ID_MAX_LENGTH))
        expect(res.text.length).toBeLessThan(1024)
      })
    ))

  it.effect("gateway: past even the router's limit, still a 400 naming the parameter", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const id = `${EXPENSE_TASK}:${"a".repeat(MAX_PATH_PARAM_LENGTH)}:b`
        const res = yield* raw("GET", `/v1/tasks/${id}/snapshots`)
        expectError(res, 400, "Bad Request", "taskId")
        expect(res.text.length).toBeLessThan(1024)
        // A long segment where the API has no parameter is simply not found.
        expectError(yield* raw("GET", `/v1/${"x".repeat(MAX_PATH_PARAM_LENGTH + 10)}`), 404, "Not Found")
      })
    ))

  it.effect("workspace API (WorkspaceApiLive): task ids past 100 characters reach its handlers", () =>
    Effect.provide(
      Effect.gen(function*() {
        const id = compositeOf(ID.taskUpload, 400)
        const res = yield* send("GET", `/workspace/tenants/${ID.tenantA}/tasks/${id}/events`)
        // The store resolves a child id to its root task's timeline: routed and answered.
        expect(res.status).toBe(200)
      }),
      overStore(contractFixture(), (ws) => workspaceServer(ws))
    ))

  it.effect("workspace API (makeWorkspaceHttpApp, mounted): task ids past 100 characters reach its handlers", () => {
    const server = overStore(contractFixture(), (memory) =>
      Layer.unwrap(
        Effect.map(makeWorkspaceHttpApp(memory), (app) =>
          HttpRouter.serve(HttpRouter.add("*", "/workspace/*", app), { disableLogger: true, disableListenLog: true }))
      ).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))))
    return Effect.provide(
      Effect.gen(function*() {
        const res = yield* send("GET", `/workspace/tasks/${compositeOf(ID.taskUpload, 400)}`)
        expect(res.status).toBe(200)
      }),
      server
    )
  })
})

describe("malformed percent-encoding in the path: 400 saying so", () => {
  const malformed = [
    ["/v1/tasks/%E0%A4%A/ui", "%E0%A4"],
    ["/v1/entities/%/tasks", "%/t"],
    ["/v1/entities/%zz/tasks", "%zz"],
    [`/v1/tasks/${EXPENSE_TASK}%C3/events`, "%C3"],
    ["/v1/nope/%", "%"],
    ["/v1/%FF", "%FF"],
    ["/workspace/tasks/%E0%A4%A", "%E0%A4"]
  ] as const

  it.effect("gateway: every malformed escape, on a known route or not, is a 400 naming it", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [path, escape] of malformed) {
          for (const method of ["GET", "POST", "DELETE"]) {
            const res = yield* send(method, path)
            expect(res.status, `${method} ${path}`).toBe(400)
            expect(res.body).toEqual(errorBody(400, "Bad Request"))
            expect(res.body.message).toContain("percent-encoding")
            expect(res.body.message).toContain(JSON.stringify(escape))
          }
        }
      })
    ))

  it.effect("gateway: well-formed escapes still route (a composite id with %3A separators)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* send("GET", `/v1/tasks/${EXPENSE_TASK}%3Areview_expenses%3Achild/events`)
        expect(res.status).toBe(200)
        expect((yield* send("GET", "/v1/%68ealth")).status).toBe(200)
      })
    ))

  it.effect("gateway: the query string too (it would be decoded leniently, bytes replaced)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [query, escape] of [["source=%ED%A0%80", "%ED%A0%80"], ["source=%zz", "%zz"], ["a=1&source=%C3", "%C3"]]) {
          const res = yield* send("GET", `/v1/tasks/${EXPENSE_TASK}/files?${query}`)
          expect(res.status, query).toBe(400)
          expect(res.body).toEqual(errorBody(400, "Bad Request"))
          expect(res.body.message).toContain("query string")
          expect(res.body.message).toContain(JSON.stringify(escape))
        }
        expect((yield* send("GET", `/v1/tasks/${EXPENSE_TASK}/files?source=caf%C3%A9`)).status).toBe(200)
      })
    ))

  it("malformedPercentEncoding: the first bad escape, short; none in well-formed targets", () => {
    expect(malformedPercentEncoding("/a/%E0%A4%A/b")).toBe("%E0%A4")
    expect(malformedPercentEncoding("/a/%zz/%E0")).toBe("%zz")
    expect(malformedPercentEncoding("/a/%E0/%zz")).toBe("%E0")
    expect(malformedPercentEncoding(`/a/${"%E0".repeat(1000)}`)).toBe(`${"%E0".repeat(8)}…`)
    for (const ok of ["/", "/a%20b", "/caf%C3%A9?x=%F0%9F%98%80&y=%2F", "/%25zz"]) {
      expect(malformedPercentEncoding(ok), ok).toBeUndefined()
    }
  })

  it.effect("workspace API: the same 400", () =>
    Effect.provide(
      Effect.gen(function*() {
        const res = yield* send("GET", `/workspace/tenants/${ID.tenantA}/tasks/%E0%A4%A/events`)
        expect(res.status).toBe(400)
        expect(res.body.message).toContain("percent-encoding")
      }),
      overStore(contractFixture(), (ws) => workspaceServer(ws))
    ))
})
