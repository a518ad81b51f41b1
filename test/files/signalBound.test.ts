/**
 * A write's signal names a task, and a file's signal comes with its file:
 * - `signalTaskId` is a task id as in a path (before: any text, so `<id>:` or `<id>:a` completed
 *   the task's upload step and was stored as written);
 * - a step signal comes from the route that checks it: `approve` and `reject` from a decision,
 *   `user_action` from a row action; a file's or a data ingest's own, `file_submitted`, spelled
 *   exactly. Before, a data ingest or a file naming `approve` decided the step past a decision's
 *   checks (an upload step completed by no one, an .exe past the step's accepted types), and a
 *   look-alike name (`File_Submitted`) was stored and did nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"

const b64 = (s: string) => Buffer.from(s).toString("base64")

describe("signals: a task id, and no step signal of another route", () => {
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

  it.effect("a data ingest sends no decision's signal and file_submitted exactly, in any spelling", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const names = [
          "approve", "reject", "user_action", "File_Submitted", "file-submitted", "file\u2010submitted",
          " approve", "APPROVE\u200b", "\u0430pprove", "ｒｅｊｅｃｔ",
          // Letters of other scripts, small capitals, digits and fillers that read as Latin ones (UTS #39).
          "re\u0458ect", "appro\u03bde", "fi\u04cfe_submitted", "\u1d00pprove", "file_submitted\u3164", "file\u2212submitted",
          "fiIe_submitted", "fi1e_submitted", "appr0ve",
          // Letters the table makes small capitals (Cyrillic т, Cherokee ꭺ), the dashes it makes ー, other separators.
          "rejec\u0442", "\uab7approve", "user\u2014action", "user action", "userAction", "user.action", "re\u0237ect", "re_ject"
        ]
        for (const signalName of names) {
          for (const body of [{ data: { n: 1 } }, { events: [{ data: { n: 1 } }] }]) {
            const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { ...body, signalTaskId: EXPENSE_TASK, signalName })
            expectError(res, 400, "Bad Request", /^signalName: .*(step signal|send it exactly so)/)
          }
        }
        expect(yield* ws.signals).toEqual([])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        // Any other name still goes to the workflow, names that merely begin or end like one included.
        for (const signalName of ["records_ready", "approved", "approval_needed", "rejected_rows", "file_submitted_v2", "reapprove", "reject_row", "承認"]) {
          const other = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: { n: 1 }, signalTaskId: EXPENSE_TASK, signalName })
          expect(other.status, signalName).toBe(201)
        }
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        // file_submitted itself completes the upload step with the records as its source.
        const submitted = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/data/ingest`, { data: { n: 1 }, signalTaskId: EXPENSE_TASK, signalName: "file_submitted" })
        expect(submitted.status).toBe(201)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("review_expenses")
      })
    ))

  it.effect("a file sends file_submitted exactly, and no decision's signal", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const before = (yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length
        const upload = (signalName: string) =>
          raw("POST", `/v1/tasks/${EXPENSE_TASK}/files`, { source: "receipts", data: b64("receipt"), fileName: "r.pdf", signalTaskId: EXPENSE_TASK, signalName })
        for (const signalName of ["approve", "Reject", "user_action", "File_Submitted", "file_submitted ", "ﬁle_submitted"]) {
          expectError(yield* upload(signalName), 400, "Bad Request", /^signalName: /)
        }
        expect((yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files`)).body.length).toBe(before)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("upload_receipts")
        expect((yield* upload("file_submitted")).status).toBe(201)
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("review_expenses")
      })
    ))
})
