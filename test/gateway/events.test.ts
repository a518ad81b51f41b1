import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK, GLOBEX_TASK } from "../support/world.js"

const event = (seq: number, extra: Record<string, unknown> = {}) => ({
  type: "reasoning.delta",
  source: "worker",
  seq,
  payload: { text: `part ${seq}` },
  groupKey: "g1",
  ...extra
})

const keyed = { config: { eventsKey: Option.some(Redacted.make("s3cret-key")) } }

describe("POST /v1/tasks/:taskId/events", () => {
  it.effect("appends and returns {ok, event} with the persisted record", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, event(2, { sourceLabel: "Reviewer" }))
        expect(res.status).toBe(200)
        expect(res.body).toEqual({
          ok: true,
          event: {
            taskId: EXPENSE_TASK,
            ...event(2, { sourceLabel: "Reviewer" }),
            createdAt: expect.any(String),
            // Set by the store: its place in the timeline, and that a client posted it.
            position: expect.stringMatching(/^(\d+-)?\d+$/),
            origin: "producer"
          }
        })
        const listed = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/events`)).body.events
        expect(listed[listed.length - 1]).toEqual(res.body.event)
      })
    ))

  it.effect("no key is needed when SVC_INTERNAL_EVENTS_KEY is unset", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expect((yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, event(2), { "x-svc-events-key": "anything" })).status).toBe(200)
      })
    ))

  it.effect("with the key set: 401 without it or with a wrong one (any length), 200 with it", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const url = `/v1/tasks/${EXPENSE_TASK}/events`
        expectError(yield* raw("POST", url, event(2)), 401, "Unauthorized", "x-svc-events-key")
        expectError(yield* raw("POST", url, event(2), { "x-svc-events-key": "" }), 401, "Unauthorized")
        expectError(yield* raw("POST", url, event(2), { "x-svc-events-key": "s3cret-kez" }), 401, "Unauthorized")
        expectError(yield* raw("POST", url, event(2), { "x-svc-events-key": "s" }), 401, "Unauthorized")
        expectError(yield* raw("POST", url, event(2), { "x-svc-events-key": "s3cret-key-and-more" }), 401, "Unauthorized")
        expect((yield* raw("POST", url, event(2), { "x-svc-events-key": "s3cret-key" })).status).toBe(200)
        // GET needs no key.
        expect((yield* raw("GET", url)).status).toBe(200)
      }), keyed))

  it.effect("with the key set, a request without a valid one is a 401 whatever its body, judged before the body is parsed", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const url = `/v1/tasks/${EXPENSE_TASK}/events`
        const deep = "[".repeat(100) + "]".repeat(100)
        // Each of these bodies is a 400 once read: fields missing, malformed JSON, none, not an object,
        // nesting past SVC_MAX_JSON_DEPTH, a __proto__ key.
        const bodies = ["{\"type\":\"x\"}", "{\"type\":", "", "null", "[]", deep, "{\"__proto__\":{}}"]
        for (const body of bodies) {
          for (const headers of [{}, { "x-svc-events-key": "" }, { "x-svc-events-key": "s3cret-kez" }, { "x-svc-events-key": "s" }]) {
            const res = yield* raw("POST", url, body, headers)
            expectError(res, 401, "Unauthorized", "Missing or invalid x-svc-events-key header")
            expect(res.headers["www-authenticate"]).toBeUndefined()
            expect(res.headers["x-request-id"]).toEqual(expect.any(String))
          }
        }
        // The path as the router reads it (any case, an escape, a trailing slash): the same endpoint.
        for (const path of [`/V1/Tasks/${EXPENSE_TASK}/EVENTS`, `/v1/tasks/${EXPENSE_TASK}/%65vents`, `${url}/`, `/${url}`]) {
          expectError(yield* raw("POST", path, "{\"type\":"), 401, "Unauthorized", "x-svc-events-key")
        }
        // With the key, the body is read as ever.
        const keyed = { "x-svc-events-key": "s3cret-key" }
        expectError(yield* raw("POST", url, "{\"type\":\"x\"}", keyed), 400, "Bad Request", "source")
        expectError(yield* raw("POST", url, "{\"type\":", keyed), 400, "Bad Request", "JSON")
        expectError(yield* raw("POST", url, deep, keyed), 400, "Bad Request", "SVC_MAX_JSON_DEPTH")
        // Other writes and reads ask for no key.
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, "{\"type\":"), 400, "Bad Request", "JSON")
        expect((yield* raw("GET", url)).status).toBe(200)
      }), keyed))

  it.effect("limits of spec §8: type 128, source 64, sourceLabel 256, groupKey 128, seq an integer >= 0", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const url = `/v1/tasks/${EXPENSE_TASK}/events`
        const bad = [
          [{ type: "t".repeat(129) }, "type"],
          [{ source: "s".repeat(65) }, "source"],
          [{ sourceLabel: "l".repeat(257) }, "sourceLabel"],
          [{ groupKey: "g".repeat(129) }, "groupKey"],
          [{ seq: -1 }, "seq"],
          [{ seq: 1.5 }, "seq"],
          [{ seq: "3" }, "seq"],
          [{ payload: [1] }, "payload"],
          [{ payload: undefined }, "payload"]
        ] as const
        for (const [patch, field] of bad) {
          expectError(yield* raw("POST", url, event(3, patch)), 400, "Bad Request", field)
        }
        const atLimits = event(3, { type: "t".repeat(128), source: "s".repeat(64), sourceLabel: "l".repeat(256), groupKey: "g".repeat(128) })
        expect((yield* raw("POST", url, atLimits)).status).toBe(200)
      })
    ))

  it.effect("an identical re-post is idempotent; a different body with a taken seq is a 409", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const url = `/v1/tasks/${EXPENSE_TASK}/events`
        const first = yield* raw("POST", url, event(5))
        const again = yield* raw("POST", url, event(5))
        expect(again.status).toBe(200)
        expect(again.body.event).toEqual(first.body.event)
        expectError(yield* raw("POST", url, event(5, { payload: { text: "other" } })), 409, "Conflict", "seq 5")
        const list = yield* raw("GET", url)
        expect(list.body.events.filter((e: any) => e.seq === 5)).toHaveLength(1)
      })
    ))

  it.effect("another tenant's task: 404", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/tasks/${GLOBEX_TASK}/events`, event(1)), 404, "Not Found")
        expectError(yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/events`), 404, "Not Found")
      })
    ))
})

describe("GET /v1/tasks/:taskId/events", () => {
  it.effect("returns {events} in the order stored (position), not by seq, per task id (composite ids are their own stream)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const url = `/v1/tasks/${EXPENSE_TASK}/events`
        for (const seq of [9, 3, 7]) expect((yield* raw("POST", url, event(seq))).status).toBe(200)
        const child = `/v1/tasks/${EXPENSE_TASK}:review_expenses:child/events`
        yield* raw("POST", child, event(4))
        const res = yield* raw("GET", url)
        // A late lower seq is read after what was there: a reader that had 9 gets 3 and 7 next.
        expect(res.body.events.map((e: any) => e.seq)).toEqual([1, 9, 3, 7])
        const positions = res.body.events.map((e: any) => e.position)
        expect(new Set(positions).size).toBe(4)
        const after9 = yield* raw("GET", `${url}?after=${positions[1]}`)
        expect(after9.body.events.map((e: any) => e.seq)).toEqual([3, 7])
        expect((yield* raw("GET", child)).body.events.map((e: any) => e.seq)).toEqual([4])
      })
    ))
})
