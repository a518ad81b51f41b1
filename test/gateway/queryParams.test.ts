/**
 * A /v1 request with a query parameter its endpoint does not declare answers 400
 * naming it, in the error shape and message form of an unknown body key; declared ones (events
 * paging, the file list's source, the task list's filters) are still taken; routes outside /v1
 * (docs, OpenAPI) are not concerned.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as HttpClient from "effect/http/HttpClient"
import fc from "fast-check"
import { GatewayApi } from "../../src/api/Api.js"
import { declaredQueryParams } from "../../src/http/input/queryParams.js"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { ACME_US, EXPENSE_TASK } from "../support/world.js"

/** Every GET of /v1 with its path filled, and the query names it declares. */
const GETS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [...declaredQueryParams(GatewayApi)]
  .filter(([key]) => key.startsWith("GET ") && !key.endsWith("/stream"))
  .map(([key, names]) => [
    key.slice(4).replace(":entityId", ACME_US).replace(":taskId", EXPENSE_TASK).replace(":documentRef", "00000000-0000-4000-8000-000000000000"),
    [...names]
  ])

describe("unknown query parameters", () => {
  it("the contract declares what the endpoints take", () => {
    const declared = declaredQueryParams(GatewayApi)
    expect([...declared.get("GET /v1/tasks/:taskId/events")!]).toEqual(["after", "limit"])
    expect([...declared.get("GET /v1/entities/:entityId/tasks")!]).toEqual(["status", "awaiting", "limit", "cursor"])
    expect([...declared.get("GET /v1/tasks/:taskId/files")!]).toEqual(["source"])
    expect([...declared.get("GET /v1/entities")!]).toEqual([])
    expect(GETS.length).toBeGreaterThan(8)
  })

  it.effect("are a 400 naming the parameter on every /v1 endpoint, like an unknown body key", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const [path, names] of GETS) {
          const res = yield* raw("GET", `${path}?cachebuster=1`)
          expectError(
            res,
            400,
            "Bad Request",
            names.length === 0
              ? "cachebuster: is unexpected: this endpoint takes no query parameters"
              : `cachebuster: is unexpected, expected: ${names.map((n) => `"${n}"`).join(" | ")}`
          )
        }
        // Writes too, before anything is done; and a HEAD.
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action?dryRun=1`, { type: "approved" }), 400, "Bad Request", /^dryRun: is unexpected/)
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/ui`)).body.task.status).toBe("IN_PROGRESS")
        expectError(yield* raw("DELETE", "/v1/gl?force=true"), 400, "Bad Request", /^force: is unexpected/)
      })
    ))

  it.effect("any name but the declared ones is refused; the declared ones are taken", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const context = yield* Effect.context<HttpClient.HttpClient>()
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(fc.constantFrom(...GETS), fc.string({ minLength: 0, maxLength: 20 }), async ([path, names], name) => {
              fc.pre(!names.includes(name))
              const res = await Effect.runPromiseWith(context)(raw("GET", `${path}?${encodeURIComponent(name)}=1`))
              expect(res.status, `${path} ${JSON.stringify(name)}`).toBe(400)
              expect(res.body.message).toMatch(/: is unexpected/)
            }),
            { numRuns: 60 }
          )
        )
        const first = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/events?limit=1`)).body.events[0].position
        const taken = yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/events?after=${first}&limit=1`)
        expect(taken.status).toBe(200)
        // A name is shown on one line with nothing invisible: separators, C1 controls and
        // bidirectional controls escaped (they had been echoed raw).
        for (const [name, shown] of [["a\u2028b", "a\\u2028b"], ["\u009b2J", "\\u009b2J"], ["x\u202ey", "x\\u202ey"]] as const) {
          const res = yield* raw("GET", `/v1/entities?${encodeURIComponent(name)}=1`)
          expect(res.body.message).toBe(`"${shown}": is unexpected: this endpoint takes no query parameters`)
        }
        // The old seq cursor is not a parameter any more: refused like any unknown name.
        expectError(yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/events?afterSeq=0`), 400, "Bad Request", /^afterSeq: is unexpected/)
        expect((yield* raw("GET", `/v1/entities/${ACME_US}/tasks?status=IN_PROGRESS`)).status).toBe(200)
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files?source=receipts`)).status).toBe(200)
        // Not /v1: the document and the docs page take what they like.
        expect((yield* raw("GET", "/openapi.json?v=2")).status).toBe(200)
      })
    ))
})
