import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { EVENT_DATA_MAX_BYTES } from "../../src/api/data.js"
import { client, expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK, GLOBEX_TASK } from "../support/world.js"

const url = `/v1/tasks/${EXPENSE_TASK}/data/ingest`

/** A data object whose JSON is exactly `bytes` UTF-8 bytes, using a multi-byte character. */
const dataOfBytes = (bytes: number) => {
  const overhead = Buffer.byteLength(JSON.stringify({ t: "" }))
  const euros = Math.floor((bytes - overhead) / 3)
  const rest = bytes - overhead - euros * 3
  return { t: "€".repeat(euros) + "a".repeat(rest) }
}

describe("POST /v1/tasks/:taskId/data/ingest", () => {
  it.effect("single body in: one DataIngestResult; no signal without signalTaskId/signalName", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const res = yield* raw("POST", url, { data: { amount: 12.5 }, kind: "expense", sourceRef: { file: "a.csv", line: 2 } })
        expect(res.status).toBe(201)
        expect(res.body).toEqual({ id: expect.any(String), status: "accepted", signaled: false })
        expect(yield* ws.signals).toEqual([])
      })
    ))

  it.effect("events array in: DataIngestResult[]; one signal per event after the batch", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const res = yield* raw("POST", url, {
          events: [{ data: { n: 1 } }, { data: { n: 2 }, sourceRef: "row-2" }, { data: { n: 3 } }],
          kind: "refund",
          signalTaskId: `${EXPENSE_TASK}:review_expenses:child`,
          signalName: "records_ready"
        })
        expect(res.status).toBe(201)
        expect(res.body).toHaveLength(3)
        expect(res.body.every((r: any) => r.status === "accepted" && r.signaled)).toBe(true)
        expect((yield* ws.signals).map((s) => [s.name, s.rootTaskId, s.payload.rowId])).toEqual(
          res.body.map((r: any) => ["records_ready", EXPENSE_TASK, r.id])
        )
      })
    ))

  it.effect("the typed client takes both answers (201 for single and bulk)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const one = yield* api.data.ingestData({ params: { taskId: EXPENSE_TASK }, payload: { data: { a: 1 } } })
        expect(one).toMatchObject({ status: "accepted" })
        const many = yield* api.data.ingestData({ params: { taskId: EXPENSE_TASK }, payload: { events: [{ data: { a: 1 } }, { data: { b: 2 } }] } })
        expect(many).toHaveLength(2)
      })
    ))

  it.effect("exactly one of data / events", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", url, { data: { a: 1 }, events: [{ data: { b: 1 } }] }), 400, "Bad Request", "exactly one of data / events")
        expectError(yield* raw("POST", url, { kind: "x" }), 400, "Bad Request", "exactly one of data / events")
        expectError(yield* raw("POST", url, { events: [] }), 400, "Bad Request", "events")
        expectError(yield* raw("POST", url, { events: [{ sourceRef: 1 }] }), 400, "Bad Request", "events.0.data")
        expectError(yield* raw("POST", url, { data: "text" }), 400, "Bad Request", "data")
        expectError(yield* raw("POST", url, { data: { a: 1 }, signalName: "x" }), 400, "Bad Request", "signalTaskId")
      })
    ))

  it.effect("the 256 KB cap is in UTF-8 bytes of the JSON data; one over-cap event rejects the whole batch", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const atCap = dataOfBytes(EVENT_DATA_MAX_BYTES)
        const overCap = dataOfBytes(EVENT_DATA_MAX_BYTES + 1)
        expect(Buffer.byteLength(JSON.stringify(overCap))).toBe(EVENT_DATA_MAX_BYTES + 1)
        // Fewer characters than bytes: a character count would have let it through.
        expect(JSON.stringify(overCap).length).toBeLessThan(EVENT_DATA_MAX_BYTES)
        expect((yield* raw("POST", url, { data: atCap })).status).toBe(201)
        const before = ws.calls.get("ingestData")
        expectError(
          yield* raw("POST", url, { events: [{ data: { ok: 1 } }, { data: overCap }], signalTaskId: EXPENSE_TASK, signalName: "s" }),
          400,
          "Bad Request",
          "events[1].data"
        )
        expect(ws.calls.get("ingestData")).toBe(before)
        expect(yield* ws.signals).toEqual([])
      }), { config: { maxBodyBytes: 4 * 1024 * 1024 } }))

  it.effect("another tenant's task: 404; a signal target that does not exist: 400 and nothing stored", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/tasks/${GLOBEX_TASK}/data/ingest`, { data: { a: 1 } }), 404, "Not Found")
        const res = yield* raw("POST", url, { data: { a: 1 }, signalTaskId: GLOBEX_TASK, signalName: "s" })
        expect([400, 404]).toContain(res.status)
        expect(yield* ws.signals).toEqual([])
      })
    ))
})
