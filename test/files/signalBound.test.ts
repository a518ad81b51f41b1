/**
 * A write's signal names a task, and a file's signal comes with its file:
 * - `signalTaskId` is a task id as in a path (before: any text, so `<id>:` or `<id>:a` completed
 *   the task's upload step and was stored as written);
 * - `file_submitted` completes an upload step with its file, so a data ingest may not send it
 *   (before: it completed the step with no file, past the step's accepted types).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")

describe("signals bound to a task and to a file", () => {
  it.effect("signalTaskId must be a task id: a malformed composite is a 400 naming it, and nothing is stored", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const before = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length
        for (const signalTaskId of [`${EXPENSE_TASK}:`, `${EXPENSE_TASK}::`, `${EXPENSE_TASK}:a`, `${EXPENSE_TASK}:a:b:c`, "NIGHTLY-Close", `${EXPENSE_TASK}x`]) {
          const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, {
            source: "receipts",
            data: b64("receipt"),
            fileName: "r.pdf",
            signalTaskId,
            signalName: "file_submitted"
          })
          expectError(res, 400, "Bad Request", "signalTaskId")
        }
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length).toBe(before)
        expect(yield* ws.signals).toEqual([])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
      })
    ))

  it.effect("a data ingest may not send file_submitted; the upload step waits for its file", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        for (const body of [{ data: { n: 1 } }, { events: [{ data: { n: 1 } }] }]) {
          const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, {
            ...body,
            signalTaskId: EXPENSE_TASK,
            signalName: "file_submitted"
          })
          expectError(res, 400, "Bad Request", /signalName.*file_submitted/)
        }
        expect(yield* ws.signals).toEqual([])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        // Any other signal name still goes to the workflow.
        const other = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: { n: 1 }, signalTaskId: EXPENSE_TASK, signalName: "records_ready" })
        expect(other.status).toBe(201)
      })
    ))
})
