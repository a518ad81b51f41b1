/**
 * A decision judged while a competing one is still in the outbox (recorded, not yet applied: its
 * sender's write delivers it before answering, and a commit's log sync off the event loop lets
 * another request be judged in between). The 409 names where the pending decision takes the
 * task, not the step it leaves: "already approved; the task is at step <the step it leaves>" read
 * as a contradiction.
 */
import { describe, expect, it } from "vitest"
import { acceptSignal } from "../../src/domain/engine.js"
import type { Workspace } from "../../src/upstream/model.js"

const step = (id: string) => ({ id, title: id, displayHint: { component: "APPROVAL" } }) as unknown as Workspace.Runbook["steps"][number]
const runbook = { steps: [step("controller_approval"), step("cfo_approval")] } as unknown as Workspace.Runbook
const task = { status: "IN_PROGRESS", currentStep: "controller_approval" }
const signal = (name: "approve" | "reject") =>
  ({ taskId: "t1", name, payload: {}, expectedStep: "controller_approval" }) as unknown as Workspace.Signal

describe("a decision against one still in the outbox", () => {
  it("a rejection after a pending approval names the step the approval moves the task to", () => {
    const accepted = acceptSignal(task, {}, signal("reject"), [{ name: "approve", expectedStep: "controller_approval" }], { runbook })
    expect(accepted).toEqual({
      _tag: "conflict",
      message: 'Step "controller_approval" was already approved; the task is at step "cfo_approval"'
    })
  })

  it("an approval after a pending rejection says the task failed", () => {
    const accepted = acceptSignal(task, {}, signal("approve"), [{ name: "reject", expectedStep: "controller_approval" }], { runbook })
    expect(accepted).toEqual({
      _tag: "conflict",
      message: 'Step "controller_approval" was already rejected; the task is FAILED with no current step'
    })
  })

  it("an approval on the last step, pending, completes the task", () => {
    const last = { status: "IN_PROGRESS", currentStep: "cfo_approval" }
    const s = { taskId: "t1", name: "reject", payload: {}, expectedStep: "cfo_approval" } as unknown as Workspace.Signal
    const accepted = acceptSignal(last, {}, s, [{ name: "approve", expectedStep: "cfo_approval" }], { runbook })
    expect(accepted).toEqual({
      _tag: "conflict",
      message: 'Step "cfo_approval" was already approved; the task is COMPLETED with no current step'
    })
  })

  it("a link's rejection after another person's pending approval names who approved (as the same decision's 409 does)", () => {
    const viaLink = { ...signal("reject"), payload: { via: "link" } } as unknown as Workspace.Signal
    const pending = [{ name: "approve", expectedStep: "controller_approval", actor: "Bob@acme.example", via: "link" as const, recordedAt: "2026-12-07T10:00:00.000Z" }]
    const accepted = acceptSignal(task, {}, viaLink, pending, { runbook, actor: "carol@acme.example" } as never)
    expect(accepted).toEqual({
      _tag: "conflict",
      message: 'Step "controller_approval" was already approved by Bob@acme.example; the task is at step "cfo_approval"'
    })
  })

  it("a step decided and applied earlier by someone named says who, and where the task is now", () => {
    const moved = { status: "IN_PROGRESS", currentStep: "cfo_approval" }
    const decided = { controller_approval: { decision: "approved", decidedBy: "bob@acme.example" } }
    const accepted = acceptSignal(moved, decided, signal("reject"), [], { runbook })
    expect(accepted).toMatchObject({ _tag: "conflict", message: expect.stringMatching(/^Step "controller_approval" was already approved by bob@acme\.example; /) })
  })

  it("a step decided and applied earlier names where the task is now", () => {
    const moved = { status: "IN_PROGRESS", currentStep: "cfo_approval" }
    const accepted = acceptSignal(moved, { controller_approval: { decision: "approved" } }, signal("reject"), [], { runbook })
    expect(accepted).toEqual({
      _tag: "conflict",
      message: 'Step "controller_approval" was already approved; the task is at step "cfo_approval"'
    })
  })
})

describe("a signal against a file still in the outbox", () => {
  const upload = { id: "upload_receipts", title: "Upload", displayHint: { component: "FILE_UPLOAD" } } as unknown as Workspace.Runbook["steps"][number]
  const withUpload = { steps: [upload, step("review")] } as unknown as Workspace.Runbook
  const atUpload = { status: "IN_PROGRESS", currentStep: "upload_receipts" }
  const pendingFile = [{ name: "file_submitted", expectedStep: "upload_receipts" }]
  const on = (name: string, expectedStep?: string) =>
    ({ taskId: "t1", name, payload: {}, ...(expectedStep !== undefined ? { expectedStep } : {}) }) as unknown as Workspace.Signal

  it("an approval of the upload step is a 409 naming the file and the step it moves the task to", () => {
    // Before: recorded (a 200), then dropped at delivery as "no longer current".
    expect(acceptSignal(atUpload, {}, on("approve", "upload_receipts"), pendingFile, { runbook: withUpload })).toEqual({
      _tag: "conflict",
      message: 'Step "upload_receipts" was already completed by a submitted file; the task is at step "review"'
    })
    expect(acceptSignal(atUpload, {}, on("reject"), pendingFile, { runbook: withUpload })).toMatchObject({ _tag: "conflict" })
  })

  it("a second file bound by arrival is the same completion; one naming the step is a 409", () => {
    expect(acceptSignal(atUpload, {}, on("file_submitted"), pendingFile, { runbook: withUpload })).toEqual({ _tag: "duplicate" })
    expect(acceptSignal(atUpload, {}, on("file_submitted", "upload_receipts"), pendingFile, { runbook: withUpload })).toMatchObject({
      _tag: "conflict"
    })
  })

  it("a file on a step that is not an upload step decides nothing: a decision there is recorded", () => {
    const atReview = { status: "IN_PROGRESS", currentStep: "review" }
    const filedOnReview = [{ name: "file_submitted", expectedStep: "review" }]
    expect(acceptSignal(atReview, {}, on("approve", "review"), filedOnReview, { runbook: withUpload })).toEqual({
      _tag: "record",
      expectedStep: "review"
    })
  })
})
