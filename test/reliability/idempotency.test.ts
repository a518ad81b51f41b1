/**
 * Idempotent writes and step-bound decisions at the gateway: the
 * client's `Idempotency-Key` (or one generated per request) reaches the workspace with every
 * write; a decision names its step (the client's `step`, else the one current on arrival).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { ACME, ACME_US, EXPENSE_TASK, ROW_NEEDS_ATTENTION } from "../support/world.js"

const createTask = (context: Record<string, unknown>, headers: Record<string, string> = {}) =>
  raw("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context }, headers)

describe("Idempotency-Key on the gateway's writes", () => {
  it.effect("the same key and body again: the first answer, nothing written twice", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const before = (yield* ws.listTasks(ACME, ACME_US)).length
        const key = { "idempotency-key": "8a1f2c9e-create" }
        const first = yield* createTask({ period: "2026-11" }, key)
        expect(first.status).toBe(201)
        const again = yield* createTask({ period: "2026-11" }, key)
        expect(again.status).toBe(201)
        expect(again.body).toEqual(first.body)
        expect(yield* ws.listTasks(ACME, ACME_US)).toHaveLength(before + 1)
        // Without a key, each request is its own write (the gateway's key is per request).
        yield* createTask({ period: "2026-11" })
        yield* createTask({ period: "2026-11" })
        expect(yield* ws.listTasks(ACME, ACME_US)).toHaveLength(before + 3)
      })
    ))

  it.effect("the same key with a different body (or endpoint) is a 409 in the error shape, saying why", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const key = { "idempotency-key": "reused-key" }
        expect((yield* createTask({ period: "2026-11" }, key)).status).toBe(201)
        const other = yield* createTask({ period: "2026-12" }, key)
        expectError(other, 409, "Conflict", /Idempotency-Key "reused-key" was already used for a different request.*Stripe/)
        const elsewhere = yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`, undefined, key)
        expectError(elsewhere, 409, "Conflict", "different request")
        // Nothing was done by the refused requests: the row is still rejectable.
        expect((yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`)).status).toBe(200)
        expect((yield* ws.listTasks(ACME, ACME_US)).filter((t) => t.title.endsWith("2026-12"))).toEqual([])
      })
    ))

  it.effect("a retried direct mutation gets its first answer (not a 400 for the row it already rejected)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const key = { "idempotency-key": "reject-once" }
        const first = yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`, undefined, key)
        expect(first.body).toEqual({ status: "OK", rowId: ROW_NEEDS_ATTENTION, newStatus: "REJECTED" })
        const again = yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`, undefined, key)
        expect([again.status, again.body]).toEqual([200, first.body])
        // A new request (no key) is told the truth.
        expectError(yield* raw("POST", `/v1/subledgers/expenses/${ROW_NEEDS_ATTENTION}/reject`), 400, "Bad Request", undefined, {
          currentStatus: "REJECTED"
        })
      })
    ))

  it.effect("an event retried with its key and its payload's members in another order is the same request", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const key = { "idempotency-key": "event-order" }
        const post = (payload: unknown) =>
          raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, { type: "note", source: "worker", seq: 9, payload }, key)
        const first = yield* post({ a: 1, b: { c: [1, { d: 2, e: 3 }] } })
        expect(first.status).toBe(200)
        // Before: 409 "already used for a different request" (the fingerprint kept the order).
        const again = yield* post({ b: { c: [1, { e: 3, d: 2 }] }, a: 1 })
        expect([again.status, again.body]).toEqual([200, first.body])
        expectError(yield* post({ b: { c: [{ e: 3, d: 2 }, 1] }, a: 1 }), 409, "Conflict", "different request")
      })
    ))

  it.effect("a malformed key is a 400 before anything is written", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const before = (yield* ws.listTasks(ACME, ACME_US)).length
        for (const bad of ["has space", "x".repeat(256), "tab\there"]) {
          const res = yield* createTask({ period: "2026-11" }, { "idempotency-key": bad })
          expectError(res, 400, "Bad Request", "Idempotency-Key must be 1 to 255 visible ASCII characters")
        }
        expect(yield* ws.listTasks(ACME, ACME_US)).toHaveLength(before)
      })
    ))

  it.effect("the published document declares the header on every write and its 409", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const doc = (yield* raw("GET", "/openapi.json")).body
        for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
          for (const [method, op] of Object.entries(ops)) {
            const header = (op.parameters ?? []).find((p: any) => p.in === "header" && p.name === "Idempotency-Key")
            if (method === "get") expect(header, `${method} ${path}`).toBeUndefined()
            else {
              expect(header, `${method} ${path}`).toMatchObject({ required: false, schema: { type: "string" } })
              expect(op.responses["409"], `${method} ${path}`).toBeDefined()
            }
          }
        }
      })
    ))
})

describe("decisions bound to their step at the gateway", () => {
  it.effect("`step` names the decision's step: a repeat is {ok: true} and moves nothing; a stale one is a 409 naming the current step", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const act = (body: Record<string, unknown>) => raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, body)
        expect((yield* act({ type: "approved", step: "review_expenses" })).body).toEqual({ ok: true })
        expect((yield* ws.getTask(EXPENSE_TASK)).currentStep).toBe("sign_off")
        const repeat = yield* act({ type: "approved", step: "review_expenses", comments: "double click" })
        expect([repeat.status, repeat.body]).toEqual([200, { ok: true }])
        expect((yield* ws.getTask(EXPENSE_TASK)).currentStep).toBe("sign_off")
        expectError(
          yield* act({ type: "rejected", step: "review_expenses" }),
          409,
          "Conflict",
          `Step "review_expenses" was already approved; the task is at step "sign_off"`
        )
        expectError(yield* act({ type: "approved", step: "upload_receipts" }), 409, "Conflict", `the task is at step "sign_off"`)
        // A step id that is not a string, or empty, is a 400 like any bad field.
        expectError(yield* act({ type: "approved", step: "" }), 400, "Bad Request", "step")
        // Unnamed: the step current on arrival.
        expect((yield* act({ type: "approved" })).body).toEqual({ ok: true })
        expect(yield* ws.getTask(EXPENSE_TASK)).toMatchObject({ status: "COMPLETED", currentStep: null })
        // The last approval repeated after the task completed still answers as the first did.
        expect((yield* act({ type: "approved", step: "sign_off" })).body).toEqual({ ok: true })
      })
    ))

  it.effect("a row action for a step that is no longer current is a 409; `step` is not forwarded as row data", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const rowAction = (step: string) =>
          raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, { ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS_ATTENTION, step })
        yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved" })
        expectError(yield* rowAction("review_expenses"), 409, "Conflict", `the task is at step "sign_off"`)
        expect((yield* ws.signals).filter((s) => s.name === "user_action")).toEqual([])
      })
    ))

  it.effect("the gateway names the step it read: the signal carries it", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, { ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS_ATTENTION })
        yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", comments: "ok" })
        expect((yield* ws.signals).map((s) => [s.name, s.expectedStep, s.payload])).toEqual([
          ["user_action", "review_expenses", { kind: "row_action", ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS_ATTENTION }],
          ["approve", "review_expenses", { reason: "ok" }]
        ])
      })
    ))
})
