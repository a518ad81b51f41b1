import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { client, expectError, raw, withGateway } from "../support/gateway.js"
import { GLOBEX_ROW, MISSING, ROW_NEEDS_ATTENTION, ROW_REJECTED } from "../support/world.js"

describe("POST /v1/subledgers/:ledger/:rowId/reject", () => {
  it.effect("NEEDS_ATTENTION to REJECTED with RejectResult", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        expect(yield* api.subledgers.rejectRow({ params: { ledger: "expenses", rowId: ROW_NEEDS_ATTENTION } })).toEqual({
          status: "OK",
          rowId: ROW_NEEDS_ATTENTION,
          newStatus: "REJECTED"
        })
        // Now REJECTED: a second reject is an illegal transition.
        expectError(yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`), 400, "Bad Request", "REJECTED", {
          currentStatus: "REJECTED"
        })
      })
    ))

  it.effect("rowId is checked as a UUID before dispatch; unknown ledger, missing or foreign row: 404", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", "/v1/subledgers/expenses/row-1/reject"), 400, "Bad Request", "rowId")
        expect(ws.calls.get("rejectRow")).toBeUndefined()
        expectError(yield* raw("POST", `/v1/subledgers/expenses/${MISSING}/reject`), 404, "Not Found")
        expectError(yield* raw("POST", `/v1/subledgers/expenses/${GLOBEX_ROW}/reject`), 404, "Not Found")
        expectError(yield* raw("POST", `/v1/subledgers/invoices/${ROW_NEEDS_ATTENTION}/reject`), 404, "Not Found")
        expectError(yield* raw("POST", `/v1/subledgers/journal_proposals/${ROW_NEEDS_ATTENTION}/reject`), 404, "Not Found")
      })
    ))
})

describe("PATCH /v1/subledgers/:ledger/:rowId", () => {
  it.effect("edits an editable field, coercing the value", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const res = yield* raw("PATCH", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field: "amount_gross", value: "190.10" })
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ status: "OK", rowId: ROW_NEEDS_ATTENTION, field: "amount_gross", value: 190.1 })
        const cur = yield* raw("PATCH", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}`, { field: "currency", value: "eur" })
        expect(cur.body.value).toBe("EUR")
      })
    ))

  it.effect("400s: INVALID_FIELD, coercion failure, status that does not allow edits, DTO", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const patch = (rowId: string, body: unknown) => raw("PATCH", `/v1/subledgers/expenses/${rowId}`, body)
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "status", value: "APPROVED" }), 400, "Bad Request", "not editable", {
          code: "INVALID_FIELD"
        })
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "amount_gross", value: "12,50" }), 400, "Bad Request", "decimal")
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "amount_gross", value: 1.234 }), 400, "Bad Request", "decimal places")
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "amount_gross", value: true }), 400, "Bad Request", "decimal")
        expectError(yield* patch(ROW_REJECTED, { field: "amount_gross", value: 1 }), 400, "Bad Request", "cannot be edited", {
          currentStatus: "REJECTED"
        })
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "amount_gross" }), 400, "Bad Request", "value")
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { value: 1 }), 400, "Bad Request", "field")
        expectError(yield* patch(ROW_NEEDS_ATTENTION, { field: "amount_gross", value: [1] }), 400, "Bad Request", "value")
        expectError(yield* patch("nope", { field: "amount_gross", value: 1 }), 400, "Bad Request", "rowId")
        expectError(yield* patch(GLOBEX_ROW, { field: "amount_gross", value: 1 }), 404, "Not Found")
      })
    ))
})
