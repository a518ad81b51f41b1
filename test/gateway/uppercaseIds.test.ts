/**
 * An id in a path in upper case names what it names in lower case (RFC 9562: UUIDs are read
 * case-insensitively on input; the store keeps them lower case). Before: 404 for each. So does an
 * id in a body or a query: a row action's row, a file's signal task, the inbox's entity filter.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { raw, withGateway } from "../support/gateway.js"
import { ACME_US, EXPENSE_TASK, GLOBEX_TASK, ROW_NEEDS_ATTENTION } from "../support/world.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")

const upper = (id: string) => id.toUpperCase()

describe("ids in paths in any case", () => {
  it.effect("entity, task (plain and composite), document and row ids in upper or mixed case", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (const path of [`/v1/entities/${ACME_US}/tasks`, `/v1/tasks/${EXPENSE_TASK}/ui`, `/v1/tasks/${EXPENSE_TASK}/events`, `/v1/tasks/${EXPENSE_TASK}/files`]) {
          const lower = yield* raw("GET", path)
          expect(lower.status, path).toBe(200)
          const shouted = yield* raw("GET", path.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/, upper))
          expect([shouted.status, shouted.body], path).toEqual([200, lower.body])
        }
        const mixed = EXPENSE_TASK.slice(0, 18) + upper(EXPENSE_TASK.slice(18))
        expect((yield* raw("GET", `/v1/tasks/${mixed}/ui`)).status).toBe(200)
        // A document of the task, by its id in upper case.
        const [doc] = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body as Array<{ id: string }>
        const download = yield* raw("GET", `/v1/tasks/${upper(EXPENSE_TASK)}/files/${upper(doc!.id)}/download`)
        expect(download.status).toBe(200)
        // A row, then its answer names it as stored.
        const rejected = yield* raw("POST", `/v1/subledgers/expenses/${upper(ROW_NEEDS_ATTENTION)}/reject`)
        expect(rejected.body).toEqual({ status: "OK", rowId: ROW_NEEDS_ATTENTION, newStatus: "REJECTED" })
        // Another tenant's task is still a 404, in any case.
        expect((yield* raw("GET", `/v1/tasks/${upper(GLOBEX_TASK)}/ui`)).status).toBe(404)
      })
    ))

  it.effect("ids in bodies and queries: a row action's rowId, a file's signalTaskId, the inbox's entityId", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        // Before: 404 "Row not found".
        const action = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/row-action`, {
          ledger: "expenses",
          action: "reject_row",
          rowId: upper(ROW_NEEDS_ATTENTION)
        })
        expect([action.status, action.body]).toEqual([200, { ok: true }])
        expect(yield* ws.signals).toMatchObject([{ payload: { rowId: ROW_NEEDS_ATTENTION } }])
        // Before: signaled "true" to no task, and the upload step stayed where it was.
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const ui = yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/ui`)
        const submit = ui.body.step.args.actions[0]
        const file = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files/ingest`, {
          source: "receipts",
          fileRef: { provider: "inline_base64", data: b64("receipt") },
          fileName: "r.pdf",
          signalTaskId: upper(EXPENSE_TASK),
          signalName: submit.signalName
        })
        expect(file.status).toBe(201)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("review_expenses")
        // Before: an empty inbox.
        const lower = yield* raw("GET", `/v1/inbox?entityId=${ACME_US}`)
        const shouted = yield* raw("GET", `/v1/inbox?entityId=${upper(ACME_US)}`)
        expect(lower.status).toBe(200)
        expect(lower.body.items.length).toBeGreaterThan(0)
        expect(shouted.body).toEqual(lower.body)
      })
    ))
})
