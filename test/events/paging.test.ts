/** Opt-in timeline paging: GET /v1/tasks/:taskId/events?after=&limit=, `after` an event's position. */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK, GLOBEX_TASK, MISSING } from "../support/world.js"

const url = `/v1/tasks/${EXPENSE_TASK}/events`

/** Posts events with these seqs, out of order on purpose: the answer is in the order they were stored. */
const seed = (seqs: ReadonlyArray<number>) =>
  Effect.forEach(seqs, (seq) =>
    Effect.tap(raw("POST", url, { type: "note", source: "test", seq, payload: { n: seq } }), (res) =>
      Effect.sync(() => expect(res.status).toBe(200))), { discard: true })

const seqsOf = (res: { readonly body: any }) => (res.body.events as Array<{ seq: number }>).map((e) => e.seq)

/** The position of each event of the whole timeline, by seq (the seqs are distinct here). */
const positionsBySeq = Effect.map(raw("GET", url), (res) =>
  new Map((res.body.events as Array<{ seq: number; position: string }>).map((e) => [e.seq, e.position])))

describe("GET /v1/tasks/:taskId/events paging", () => {
  // Before: seq ascending whatever the order of the posts. Now the store's order (positions): a
  // late lower seq is read after what was there, so a follower's cursor never passes it.
  it.effect("without parameters: every event, in the order stored (the spec's answer shape is unchanged)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        yield* seed([5, 7, 3, 2, 4])
        const res = yield* raw("GET", url)
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toEqual(["events"])
        // seq 1 is the fixture's.
        expect(seqsOf(res)).toEqual([1, 5, 7, 3, 2, 4])
        const positions = (res.body.events as Array<{ position: string }>).map((e) => e.position)
        expect(new Set(positions).size).toBe(6)
        expect(positions.every((p) => /^\d+$/.test(p))).toBe(true)
      })))

  it.effect("after: only the events after that position; limit: the first ones; both together page forward", () =>
    withGateway(() =>
      Effect.gen(function*() {
        yield* seed([2, 3, 4, 5, 10]) // seq 1 is the fixture's
        const at = yield* positionsBySeq
        expect(seqsOf(yield* raw("GET", `${url}?after=${at.get(3)}`))).toEqual([4, 5, 10])
        expect(seqsOf(yield* raw("GET", `${url}?after=0`))).toEqual([1, 2, 3, 4, 5, 10])
        expect(seqsOf(yield* raw("GET", `${url}?limit=2`))).toEqual([1, 2])
        const limited = yield* raw("GET", `${url}?after=${at.get(2)}&limit=2`)
        expect(seqsOf(limited)).toEqual([3, 4])
        expect(limited.body).toMatchObject({ hasMore: true, nextAfter: at.get(4) })
        const rest = yield* raw("GET", `${url}?after=${at.get(4)}&limit=1000`)
        expect(seqsOf(rest)).toEqual([5, 10])
        expect(Object.keys(rest.body)).toEqual(["events"])
        expect(seqsOf(yield* raw("GET", `${url}?after=${at.get(10)}`))).toEqual([])
        // Paging through with nextAfter reads every event exactly once.
        const seen: Array<number> = []
        let after: string | undefined
        for (let i = 0; i < 10; i++) {
          const res = yield* raw("GET", `${url}?limit=4${after === undefined ? "" : `&after=${after}`}`)
          seen.push(...seqsOf(res))
          if (res.body.nextAfter === undefined) break
          after = res.body.nextAfter
        }
        expect(seen).toEqual([1, 2, 3, 4, 5, 10])
        // A late lower seq comes after the cursor a follower holds: it is not skipped.
        yield* seed([0])
        expect(seqsOf(yield* raw("GET", `${url}?after=${at.get(10)}`))).toEqual([0])
      })))

  it.effect("bad values are a 400 naming the parameter; the old afterSeq is an unknown parameter", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const bad of ["-1", "abc", "1.5", "1e3", "", " 1", "0x10", "99999999999999999", "1-", "-", "1-2-3", "12345678901234567890-1", "9007199254740992", "9007199254740993", "1-9007199254740993"]) {
          expectError(yield* raw("GET", `${url}?after=${encodeURIComponent(bad)}`), 400, "Bad Request", "after")
        }
        for (const bad of ["0", "1001", "-5", "ten", "2.5"]) {
          expectError(yield* raw("GET", `${url}?limit=${encodeURIComponent(bad)}`), 400, "Bad Request", "limit")
        }
        expectError(yield* raw("GET", `${url}?afterSeq=1`), 400, "Bad Request", "afterSeq")
        // A position past every one this store (SQLite: digits) has given out would hide every later event.
        for (const past of ["1-0", "1-2", "99-0", "9007199254740991"]) {
          expectError(yield* raw("GET", `${url}?after=${past}`), 400, "Bad Request", `after: "${past}" is past every position`)
        }
      })))

  it.effect("another tenant's or a missing task is a 404, paged or not", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/events?after=0&limit=5`), 404, "Not Found")
        expectError(yield* raw("GET", `/v1/tasks/${MISSING}/events?limit=5`), 404, "Not Found")
      })))
})

describe("the OpenAPI document", () => {
  it.effect("declares the paging parameters and the event stream beside the spec's operations", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const doc = (yield* raw("GET", "/openapi.json")).body
        const list = doc.paths["/v1/tasks/{taskId}/events"].get
        const names = (op: any) => (op.parameters as Array<{ name: string; in: string }>).map((p) => `${p.in}:${p.name}`)
        expect(names(list)).toEqual(expect.arrayContaining(["query:after", "query:limit"]))
        expect(names(list)).not.toContain("query:afterSeq")
        const stream = doc.paths["/v1/tasks/{taskId}/events/stream"].get
        expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"])
        expect(names(stream)).toEqual(expect.arrayContaining(["query:after", "header:last-event-id"]))
        expect(stream.description).toContain("Last-Event-ID")
        expect(Object.keys(stream.responses)).toEqual(expect.arrayContaining(["404", "503"]))
      })))
})
