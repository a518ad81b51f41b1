import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { client, expectError, raw, withGateway } from "../support/gateway.js"
import { ACME, COMPLETED_TASK, EXPENSE_TASK, GLOBEX, GLOBEX_ROW, GLOBEX_TASK, LEGACY_TASK, MISSING, ROW_NEEDS_ATTENTION, ROW_REJECTED } from "../support/world.js"

const EXPENSE_FIELDS = [
  "amount_gross", "amount_net", "amount_tax", "currency", "merchant", "category", "description", "expense_date", "gl_account"
]

describe("GET /v1/tasks/:taskId/ui", () => {
  it.effect("composes the task, its current step and every step's status", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const ui = yield* api.tasks.getUi({ params: { taskId: EXPENSE_TASK } })
        expect(ui.task).toMatchObject({ id: EXPENSE_TASK, title: "Expense review 2026-10", status: "IN_PROGRESS" })
        expect(ui.step).toEqual({
          id: "review_expenses",
          title: "Review flagged expenses",
          displayHint: { component: "TABLE_REVIEW", config: { ledger: "expenses" } },
          // A table step's args carry the task's rows of its ledger, with the fields editable now.
          args: {
            rows: [
              { id: ROW_NEEDS_ATTENTION, status: "NEEDS_ATTENTION", fields: expect.any(Object), editable: EXPENSE_FIELDS },
              { id: ROW_REJECTED, status: "REJECTED", fields: expect.any(Object), editable: [] }
            ]
          }
        })
        const rows = ui.step!.args.rows as Array<{ fields: Record<string, unknown> }>
        expect(rows[0]!.fields).toMatchObject({ currency: expect.any(String) })
        expect(ui.steps).toEqual([
          { id: "upload_receipts", title: "Upload receipts", status: "COMPLETED" },
          { id: "review_expenses", title: "Review flagged expenses", status: "IN_PROGRESS" },
          { id: "sign_off", title: "Sign off", status: "PENDING" }
        ])
      })
    ))

  it.effect("a composite child id resolves to its root task", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const ui = yield* api.tasks.getUi({ params: { taskId: `${EXPENSE_TASK}:review_expenses:child` } })
        expect(ui.task.id).toBe(EXPENSE_TASK)
      })
    ))

  it.effect("a terminal task has every step COMPLETED and no current step; no runbook gives no steps", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        const done = yield* api.tasks.getUi({ params: { taskId: COMPLETED_TASK } })
        expect(done.step).toBeNull()
        expect(done.steps.every((s) => s.status === "COMPLETED")).toBe(true)
        const legacy = yield* api.tasks.getUi({ params: { taskId: LEGACY_TASK } })
        expect(legacy).toMatchObject({ step: null, steps: [] })
      })
    ))

  it.effect("another tenant's task answers 404 like a missing one, after refreshing the tenant once", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const foreign = yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/ui`)
        expectError(foreign, 404, "Not Found")
        const missing = yield* raw("GET", `/v1/tasks/${MISSING}/ui`)
        expectError(missing, 404, "Not Found")
        expect(foreign.body.message.replace(GLOBEX_TASK, "")).toBe(missing.body.message.replace(MISSING, ""))
        // First request resolves, the mismatch refreshes once; a missing task refreshes nothing.
        expect(ws.calls.get("resolveTenant")).toBe(2)
      })
    ))

  it.effect("a tenant whose id changed upstream is picked up by the refresh", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const api = yield* client
        yield* api.entities.listEntities() // caches acme
        // The acme slug now resolves to the tenant that owns GLOBEX_TASK (a re-provisioned tenant).
        const original = ws.resolveTenant
        ;(ws as any).resolveTenant = (slug: string) => original(slug === "acme" ? "globex" : slug)
        const ui = yield* api.tasks.getUi({ params: { taskId: GLOBEX_TASK } })
        expect(ui.task.id).toBe(GLOBEX_TASK)
        // And the refreshed tenant is the one every later lookup uses.
        const entities = yield* api.entities.listEntities()
        expect(entities.every((e) => e.tenantId === GLOBEX)).toBe(true)
      })
    ))
})

describe("GET /v1/tasks/:taskId/snapshots", () => {
  it.effect("passes the snapshots through", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const api = yield* client
        expect(yield* api.tasks.getSnapshots({ params: { taskId: EXPENSE_TASK } })).toEqual({
          upload_receipts: { files: 3, submittedBy: "dana@acme.example" }
        })
        expectError(yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/snapshots`), 404, "Not Found")
      })
    ))
})

describe("POST /v1/tasks/:taskId/action", () => {
  it.effect("approved sends the approve signal with comments as reason", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const api = yield* client
        expect(yield* api.tasks.action({ params: { taskId: EXPENSE_TASK }, payload: { type: "approved", comments: "looks right" } }))
          .toEqual({ ok: true })
        expect(yield* ws.signals).toMatchObject([{ taskId: EXPENSE_TASK, name: "approve", payload: { reason: "looks right" }, tenantId: ACME }])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("sign_off")
      })
    ))

  it.effect("rejected sends the reject signal; without comments no reason", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "rejected" })
        expect(res.status).toBe(200)
        expect(res.body).toEqual({ ok: true })
        expect(yield* ws.signals).toMatchObject([{ name: "reject", payload: {} }])
        expect((yield* ws.task(EXPENSE_TASK))?.status).toBe("FAILED")
      })
    ))

  it.effect("validates the DTO and the task", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approve" }), 400, "Bad Request", "type")
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", comments: 5 }), 400, "Bad Request", "comments")
        expectError(yield* raw("POST", `/v1/tasks/${GLOBEX_TASK}/action`, { type: "approved" }), 404, "Not Found")
        expectError(yield* raw("POST", `/v1/tasks/${COMPLETED_TASK}/action`, { type: "approved" }), 400, "Bad Request", undefined, {
          currentStatus: "COMPLETED"
        })
        expect(yield* ws.signals).toEqual([])
      })
    ))
})

describe("POST /v1/tasks/:taskId/row-action", () => {
  it.effect("reject_row is a user_action signal of kind row_action", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, {
          ledger: "expenses",
          action: "reject_row",
          rowId: ROW_NEEDS_ATTENTION
        })
        expect(res.body).toEqual({ ok: true })
        expect(yield* ws.signals).toMatchObject([{
          name: "user_action",
          payload: { kind: "row_action", ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS_ATTENTION }
        }])
      })
    ))

  it.effect("edit_cell forwards field and value (null included)", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const api = yield* client
        yield* api.tasks.rowAction({
          params: { taskId: EXPENSE_TASK },
          payload: { ledger: "expenses", action: "edit_cell", rowId: ROW_NEEDS_ATTENTION, field: "amount_gross", value: "190.10" }
        })
        yield* api.tasks.rowAction({
          params: { taskId: EXPENSE_TASK },
          payload: { ledger: "expenses", action: "edit_cell", rowId: ROW_NEEDS_ATTENTION, field: "description", value: null }
        })
        expect((yield* ws.signals).map((s) => s.payload)).toMatchObject([
          { kind: "row_action", action: "edit_cell", field: "amount_gross", value: "190.10" },
          { kind: "row_action", action: "edit_cell", field: "description", value: null }
        ])
      })
    ))

  it.effect("ledger allow-list, edit_cell needs field and value, rowId a UUID", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const post = (body: unknown) => raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, body)
        const base = { ledger: "expenses", action: "edit_cell", rowId: ROW_NEEDS_ATTENTION }
        expectError(yield* post({ ...base, ledger: "journal_proposals", field: "memo", value: "x" }), 400, "Bad Request", "ledger")
        expectError(yield* post({ ...base, value: 1 }), 400, "Bad Request", "field")
        expectError(yield* post({ ...base, field: "amount_gross" }), 400, "Bad Request", "value")
        expectError(yield* post({ ...base, rowId: "row-1", field: "amount_gross", value: 1 }), 400, "Bad Request", "rowId")
        expectError(yield* post({ ...base, action: "delete_row" }), 400, "Bad Request", "action")
        expectError(yield* post({ ...base, field: "amount_gross", value: { nested: 1 } }), 400, "Bad Request", "value")
        expect(yield* ws.signals).toEqual([])
      })
    ))

  it.effect("the workflow's ledger rules come back: currentStatus, INVALID_FIELD, other tenant's row", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const post = (body: unknown) => raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, body)
        expectError(yield* post({ ledger: "expenses", action: "reject_row", rowId: ROW_REJECTED }), 400, "Bad Request", undefined, {
          currentStatus: "REJECTED"
        })
        expectError(
          yield* post({ ledger: "expenses", action: "edit_cell", rowId: ROW_NEEDS_ATTENTION, field: "id", value: "x" }),
          400,
          "Bad Request",
          "not editable",
          { code: "INVALID_FIELD" }
        )
        expectError(yield* post({ ledger: "expenses", action: "reject_row", rowId: GLOBEX_ROW }), 404, "Not Found")
      })
    ))
})
