/**
 * A write's signal names a task, and a file's signal comes with its file:
 * - `signalTaskId` is a task id as in a path (before: any text, so `<id>:` or `<id>:a` completed
 *   the task's upload step and was stored as written);
 * - a step signal comes from the route that checks it: `approve` and `reject` from a decision,
 *   `file_submitted` from an uploaded file, each exactly so. Before, a data ingest (or a file)
 *   naming `approve` or `file_submitted` decided the step past those checks (no file, a file the
 *   step does not accept, no decision), and a look-alike name (`File_Submitted`) did nothing.
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

  it.effect("a data ingest sends no step signal, in any spelling; the step waits for its file or its decision", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const names = ["file_submitted", "approve", "reject", "File_Submitted", "file-submitted", "file\u2010submitted", " approve", "APPROVE\u200b", "\u0430pprove", "ｒｅｊｅｃｔ"]
        for (const signalName of names) {
          for (const body of [{ data: { n: 1 } }, { events: [{ data: { n: 1 } }] }]) {
            const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { ...body, signalTaskId: EXPENSE_TASK, signalName })
            expectError(res, 400, "Bad Request", /^signalName: .*step signal/)
          }
        }
        expect(yield* ws.signals).toEqual([])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        // Any other name still goes to the workflow.
        const other = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: { n: 1 }, signalTaskId: EXPENSE_TASK, signalName: "records_ready" })
        expect(other.status).toBe(201)
      })
    ))

  it.effect("a file sends file_submitted exactly, and no decision's signal", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const before = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length
        const upload = (signalName: string) =>
          raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, { source: "receipts", data: b64("receipt"), fileName: "r.pdf", signalTaskId: EXPENSE_TASK, signalName })
        for (const signalName of ["approve", "Reject", "File_Submitted", "file_submitted ", "ﬁle_submitted"]) {
          expectError(yield* upload(signalName), 400, "Bad Request", /^signalName: /)
        }
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length).toBe(before)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        expect((yield* upload("file_submitted")).status).toBe(201)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("review_expenses")
      })
    ))
})
