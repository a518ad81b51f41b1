/** Opt-in timeline paging: GET /v1/tasks/:taskId/events?afterSeq=&limit= (issue 12 item 5). */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK, GLOBEX_TASK, MISSING } from "../support/world.js"

const url = `/v1/tasks/${EXPENSE_TASK}/events`

/** Posts events with these seqs, out of order on purpose: the answer is ordered by seq anyway. */
const seed = (seqs: ReadonlyArray<number>) =>
  Effect.forEach(seqs, (seq) =>
    Effect.tap(raw("POST", url, { type: "note", source: "test", seq, payload: { n: seq } }), (res) =>
      Effect.sync(() => expect(res.status).toBe(200))), { discard: true })

const seqsOf = (res: { readonly body: any }) => (res.body.events as Array<{ seq: number }>).map((e) => e.seq)

describe("GET /v1/tasks/:taskId/events paging", () => {
  it.effect("without parameters: every event, seq ascending (the spec's answer is unchanged)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        yield* seed([5, 7, 3, 2, 4])
        const res = yield* raw("GET", url)
        expect(res.status).toBe(200)
        expect(Object.keys(res.body)).toEqual(["events"])
        // seq 1 is the fixture's.
        expect(seqsOf(res)).toEqual([1, 2, 3, 4, 5, 7])
      })))

  it.effect("afterSeq: only seq > afterSeq; limit: the first ones; both together page forward", () =>
    withGateway(() =>
      Effect.gen(function*() {
        yield* seed([5, 3, 2, 4, 10]) // seq 1 is the fixture's
        expect(seqsOf(yield* raw("GET", `${url}?afterSeq=3`))).toEqual([4, 5, 10])
        expect(seqsOf(yield* raw("GET", `${url}?afterSeq=0`))).toEqual([1, 2, 3, 4, 5, 10])
        expect(seqsOf(yield* raw("GET", `${url}?limit=2`))).toEqual([1, 2])
        expect(seqsOf(yield* raw("GET", `${url}?afterSeq=2&limit=2`))).toEqual([3, 4])
        expect(seqsOf(yield* raw("GET", `${url}?afterSeq=4&limit=1000`))).toEqual([5, 10])
        expect(seqsOf(yield* raw("GET", `${url}?afterSeq=10`))).toEqual([])
        // Paging through with the last seq seen reads every event exactly once.
        const seen: Array<number> = []
        let after: number | undefined
        for (let i = 0; i < 10; i++) {
          const page = seqsOf(yield* raw("GET", `${url}?limit=4${after === undefined ? "" : `&afterSeq=${after}`}`))
          seen.push(...page)
          if (page.length < 4) break
          after = page[page.length - 1]
        }
        expect(seen).toEqual([1, 2, 3, 4, 5, 10])
      })))

  it.effect("bad values are a 400 naming the parameter", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const bad of ["-1", "abc", "1.5", "1e3", "", " 1", "0x10", "99999999999999999"]) {
          expectError(yield* raw("GET", `${url}?afterSeq=${encodeURIComponent(bad)}`), 400, "Bad Request", "afterSeq")
        }
        for (const bad of ["0", "1001", "-5", "ten", "2.5"]) {
          expectError(yield* raw("GET", `${url}?limit=${encodeURIComponent(bad)}`), 400, "Bad Request", "limit")
        }
      })))

  it.effect("another tenant's or a missing task is a 404, paged or not", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/events?afterSeq=0&limit=5`), 404, "Not Found")
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
        expect(names(list)).toEqual(expect.arrayContaining(["query:afterSeq", "query:limit"]))
        const stream = doc.paths["/v1/tasks/{taskId}/events/stream"].get
        expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"])
        expect(names(stream)).toEqual(expect.arrayContaining(["query:afterSeq", "header:last-event-id"]))
        expect(stream.description).toContain("Last-Event-ID")
        expect(Object.keys(stream.responses)).toEqual(expect.arrayContaining(["404", "503"]))
      })))
})
