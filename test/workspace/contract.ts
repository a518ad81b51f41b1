/**
 * The WorkspaceClient contract: one suite, run against every implementation (in-memory,
 * embedded store, HTTP client over the workspace server) with the same assertions. Each test
 * gets a fresh world built from the contract fixture.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { withIdempotencyKey, WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { isTerminalStatus } from "../../src/api/taskListing.js"
import { taskBoard } from "../../src/upstream/taskBoard.js"
import { withActor, withIdentity } from "../../src/services/Actor.js"
import type { Fixture } from "../../src/domain/fixture.js"
import { FILE_SUBMITTED_SIGNAL } from "../../src/api/stepSignals.js"
import { STEP } from "../../src/domain/runbook.js"
import { contractFixture, DOC_NEW_BYTES, DOC_OLD_BYTES, ID, SLUG, WF } from "./contractFixture.js"

export type MakeWorkspaceLayer = (fixture: Fixture) => Layer.Layer<WorkspaceClient, unknown>

/** The failure of `effect` (it must fail), for assertions on tag and fields. */
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.result(effect), (e) =>
    Result.isFailure(e) ? Effect.succeed(e.failure) : Effect.die(new Error(`expected a failure, got ${JSON.stringify(e.success)}`)))

const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(failure(effect), (e) => e._tag)

const collect = (body: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(body), (chunks) => Buffer.concat(chunks))

const ids = (xs: ReadonlyArray<{ readonly id: string }>) => xs.map((x) => x.id).sort()

export const runWorkspaceContract = (name: string, makeLayer: MakeWorkspaceLayer) => {
  const test = (title: string, body: Effect.Effect<void, unknown, WorkspaceClient>, timeout?: number) =>
    it.live(title, () => body.pipe(Effect.provide(makeLayer(contractFixture()))), timeout)

  describe(`WorkspaceClient contract: ${name}`, () => {
    describe("tenants and entities", () => {
      test("resolveTenant finds a tenant by slug; an unknown slug is NotFound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* ws.resolveTenant(SLUG.tenantA)).toEqual({ id: ID.tenantA, slug: SLUG.tenantA, name: "Alpha Holdings" })
        expect((yield* ws.resolveTenant(SLUG.tenantB)).id).toBe(ID.tenantB)
        expect(yield* tagOf(ws.resolveTenant("no-such-tenant"))).toBe("NotFound")
      }))

      test("listEntities returns only the tenant's entities", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const a = yield* ws.listEntities(ID.tenantA)
        expect(ids(a)).toEqual([ID.entityA1, ID.entityA2])
        expect(a.find((e) => e.id === ID.entityA1)).toEqual({ id: ID.entityA1, tenantId: ID.tenantA, slug: "alpha-us", name: "Alpha US" })
        expect(ids(yield* ws.listEntities(ID.tenantB))).toEqual([ID.entityB1])
        expect(yield* ws.listEntities(ID.missing)).toEqual([])
      }))

      test("getEntity is scoped: another tenant's, a missing or a malformed id is NotFound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect((yield* ws.getEntity(ID.tenantA, ID.entityA2)).name).toBe("Alpha UK")
        expect(yield* tagOf(ws.getEntity(ID.tenantA, ID.entityB1))).toBe("NotFound")
        expect(yield* tagOf(ws.getEntity(ID.tenantB, ID.entityA1))).toBe("NotFound")
        expect(yield* tagOf(ws.getEntity(ID.tenantA, ID.missing))).toBe("NotFound")
        expect(yield* tagOf(ws.getEntity(ID.tenantA, "not-a-uuid"))).toBe("NotFound")
      }))

      test("listTasks returns the entity's tasks with their full records, scoped to the tenant", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const tasks = yield* ws.listTasks(ID.tenantA, ID.entityA1)
        expect(ids(tasks)).toEqual([ID.taskUpload, ID.taskReview, ID.taskApprove, ID.taskCompleted].sort())
        expect(tasks.find((t) => t.id === ID.taskReview)).toEqual({
          id: ID.taskReview, tenantId: ID.tenantA, entityId: ID.entityA1, workflowId: WF.close, title: "Close 2026-09",
          status: "IN_PROGRESS", priority: "HIGH", createdAt: "2026-10-01T09:00:00.000Z", currentStep: "review"
        })
        expect(new Set(tasks.map((t) => t.status))).toEqual(new Set(["IN_PROGRESS", "COMPLETED"]))
        expect(ids(yield* ws.listTasks(ID.tenantA, ID.entityA2))).toEqual([ID.taskFailed, ID.taskLegacy].sort())
        expect(yield* ws.listTasks(ID.tenantB, ID.entityA1)).toEqual([])
      }))
    })

    describe("tasks and next steps", () => {
      test("getTask is unscoped and resolves a composite child id to its root", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const beta = yield* ws.getTask(ID.taskBeta)
        expect(beta.tenantId).toBe(ID.tenantB)
        expect(beta.currentStep).toBe("upload_b")
        expect((yield* ws.getTask(`${ID.taskReview}:review:child-flow`)).id).toBe(ID.taskReview)
        expect((yield* ws.getTask(ID.taskCompleted)).currentStep).toBeNull()
        expect(yield* tagOf(ws.getTask(ID.missing))).toBe("NotFound")
      }))

      test("a FILE_UPLOAD step advertises submit_file; steps before the current one are COMPLETED", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const upload = yield* ws.getNextStep(ID.tenantA, ID.taskUpload)
        expect(upload.step?.id).toBe("upload")
        expect(upload.step?.title).toBe("Upload bank statement")
        expect(upload.step?.displayHint).toEqual({ component: "FILE_UPLOAD", config: { accept: ["application/pdf"] } })
        expect(upload.step?.args.source).toBe("bank_statement")
        expect(upload.step?.args.actions).toEqual([
          expect.objectContaining({
            type: "submit_file",
            path: `/v1/tasks/${ID.taskUpload}/files/ingest`,
            signalTaskId: ID.taskUpload,
            signalName: FILE_SUBMITTED_SIGNAL
          })
        ])
        // Every step carries its runbook title (the console names steps by it).
        expect(upload.steps.map((s) => typeof s.title === "string" && s.title.length > 0)).toEqual([true, true, true])
        expect(upload.steps.map(({ id, status }) => ({ id, status }))).toEqual([
          { id: "upload", status: STEP.CURRENT },
          { id: "review", status: STEP.PENDING },
          { id: "sign_off", status: STEP.PENDING }
        ])
        const review = yield* ws.getNextStep(ID.tenantA, ID.taskReview)
        expect(review.step?.id).toBe("review")
        expect(review.step?.displayHint.component).toBe("TABLE_REVIEW")
        expect(review.steps.map((s) => s.status)).toEqual([STEP.COMPLETED, STEP.CURRENT, STEP.PENDING])
      }))

      test("terminal tasks have no current step", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const done = yield* ws.getNextStep(ID.tenantA, ID.taskCompleted)
        expect(done.step).toBeNull()
        expect(done.steps.map(({ id, status }) => ({ id, status }))).toEqual([
          { id: "first", status: STEP.COMPLETED },
          { id: "second", status: STEP.COMPLETED }
        ])
        const failed = yield* ws.getNextStep(ID.tenantA, ID.taskFailed)
        expect(failed.step).toBeNull()
        expect(failed.steps[0]).toMatchObject({ id: "upload", status: STEP.COMPLETED })
        expect(failed.steps.slice(1).every((s) => s.status !== STEP.COMPLETED && s.status !== STEP.CURRENT)).toBe(true)
      }))

      test("getNextStep is NotFound for a task without runbook, another tenant's or a missing task", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.getNextStep(ID.tenantA, ID.taskLegacy))).toBe("NotFound")
        expect(yield* tagOf(ws.getNextStep(ID.tenantA, ID.taskBeta))).toBe("NotFound")
        expect(yield* tagOf(ws.getNextStep(ID.tenantB, ID.taskUpload))).toBe("NotFound")
        expect(yield* tagOf(ws.getNextStep(ID.tenantA, ID.missing))).toBe("NotFound")
        expect((yield* ws.getNextStep(ID.tenantB, ID.taskBeta)).step?.id).toBe("upload_b")
      }))

      test("getNextSteps answers per task, in order, as getNextStep would; a task that fails or is another tenant's is null", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const asked = [ID.taskUpload, ID.taskLegacy, ID.taskBeta, ID.taskReview, ID.missing, ID.taskCompleted]
        const answers = yield* ws.getNextSteps(ID.tenantA, asked)
        expect(answers.map((a) => a.taskId)).toEqual(asked)
        // The task without runbook (its lookup fails) and another tenant's task answer exactly like a missing one.
        expect(answers.filter((a) => a.nextStep === null).map((a) => a.taskId)).toEqual([ID.taskLegacy, ID.taskBeta, ID.missing])
        for (const answer of answers) {
          if (answer.nextStep !== null) expect(answer.nextStep).toEqual(yield* ws.getNextStep(ID.tenantA, answer.taskId))
        }
        expect(answers[0]!.nextStep?.step?.id).toBe("upload")
        expect(answers[3]!.nextStep?.step?.id).toBe("review")
        expect(answers[5]!.nextStep?.step).toBeNull()
        // The other tenant sees its own task and none of tenant A's.
        const b = yield* ws.getNextSteps(ID.tenantB, [ID.taskUpload, ID.taskBeta])
        expect(b.map((a) => a.nextStep?.step?.id ?? null)).toEqual([null, "upload_b"])
        expect(yield* ws.getNextSteps(ID.tenantA, [])).toEqual([])
      }))

      test("getNextSteps answers a list longer than one upstream call's bound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const asked = Array.from({ length: 1200 }, (_, i) => i % 3 === 0 ? ID.taskReview : i % 3 === 1 ? ID.missing : ID.taskUpload)
        const answers = yield* ws.getNextSteps(ID.tenantA, asked)
        expect(answers.length).toBe(1200)
        expect(answers.map((a) => a.nextStep?.step?.id ?? null)).toEqual(
          asked.map((id) => id === ID.taskReview ? "review" : id === ID.taskUpload ? "upload" : null)
        )
      }))

      test("the task board is listTasks with each running task's awaiting from getNextSteps; another tenant's entity is NotFound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const board = taskBoard(ws)
        for (const query of [undefined, { status: "IN_PROGRESS" }, { limit: 1 }]) {
          const tasks = yield* ws.listTasks(ID.tenantA, ID.entityA1, query)
          const steps = yield* ws.getNextSteps(ID.tenantA, tasks.filter((t) => !isTerminalStatus(t.status)).map((t) => t.id))
          const expected = tasks.map((task) => {
            const component = steps.find((s) => s.taskId === task.id)?.nextStep?.step?.displayHint.component
            return component === undefined ? task : { ...task, awaiting: component }
          })
          expect(yield* board(ID.tenantA, ID.entityA1, query)).toEqual(expected)
        }
        const all = yield* board(ID.tenantA, ID.entityA1)
        expect(all.find((t) => t.id === ID.taskUpload)?.awaiting).toBe("FILE_UPLOAD")
        // The completed task and the one without runbook (its lookup fails) await nothing.
        expect(all.find((t) => t.id === ID.taskCompleted)).toEqual(yield* ws.getTask(ID.taskCompleted))
        expect((yield* board(ID.tenantA, ID.entityA2)).find((t) => t.id === ID.taskLegacy)).toEqual(yield* ws.getTask(ID.taskLegacy))
        expect(yield* tagOf(board(ID.tenantA, ID.entityB1))).toBe("NotFound")
        expect(yield* tagOf(board(ID.tenantB, ID.entityA1))).toBe("NotFound")
        expect(yield* tagOf(board(ID.tenantA, ID.missing))).toBe("NotFound")
      }))

      test("getSnapshots returns the task's snapshots, scoped to the tenant", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* ws.getSnapshots(ID.tenantA, ID.taskReview)).toEqual({ upload: { files: 1, submittedBy: "dana@alpha.example" } })
        expect(yield* ws.getSnapshots(ID.tenantA, ID.taskUpload)).toEqual({})
        expect(yield* tagOf(ws.getSnapshots(ID.tenantB, ID.taskReview))).toBe("NotFound")
      }))
    })

    describe("workflows", () => {
      test("listWorkflows returns the tenant's workflows plus the global ones", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const a = yield* ws.listWorkflows(ID.tenantA)
        expect(ids(a)).toEqual([WF.approvals, WF.legacy, WF.close].sort())
        expect(a.find((w) => w.id === WF.close)).toEqual({ id: WF.close, name: "Month close", tenantId: null })
        expect(a.find((w) => w.id === WF.legacy)).toEqual({ id: WF.legacy, name: "Legacy import", tenantId: ID.tenantA })
        expect(ids(yield* ws.listWorkflows(ID.tenantB))).toEqual([WF.beta, WF.close].sort())
      }))

      test("getRunbook returns steps and config schema; a null runbook or another tenant's is NotFound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const runbook = yield* ws.getRunbook(ID.tenantB, WF.close)
        expect(runbook.steps.map((s) => s.id)).toEqual(["upload", "review", "sign_off"])
        expect(runbook.steps[0]!.args).toEqual({ source: "bank_statement" })
        expect(Object.keys(runbook.configSchema.global?.properties ?? {})).toEqual(["period", "threshold"])
        expect(runbook.configSchema.global?.properties.threshold?.default).toBe(75)
        expect(runbook.configSchema.global?.properties.period?.pattern).toBe("^\\d{4}-(0[1-9]|1[0-2])$")
        expect((yield* ws.getRunbook(ID.tenantA, WF.approvals)).steps).toHaveLength(2)
        expect(yield* tagOf(ws.getRunbook(ID.tenantA, WF.legacy))).toBe("NotFound")
        expect(yield* tagOf(ws.getRunbook(ID.tenantA, WF.beta))).toBe("NotFound")
        expect(yield* tagOf(ws.getRunbook(ID.tenantA, "no-such-workflow"))).toBe("NotFound")
      }))

      test("createTask starts a task at the runbook's first step", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const created = yield* ws.createTask(ID.tenantA, ID.entityA2, { workflowId: WF.close, context: { period: "2026-11" } })
        expect(created).toMatchObject({ entityId: ID.entityA2, workflowId: WF.close, status: "IN_PROGRESS" })
        expect(typeof created.title).toBe("string")
        expect(Number.isNaN(Date.parse(created.createdAt))).toBe(false)
        expect(ids(yield* ws.listTasks(ID.tenantA, ID.entityA2))).toContain(created.id)
        const task = yield* ws.getTask(created.id)
        expect(task).toMatchObject({ tenantId: ID.tenantA, currentStep: "upload", status: "IN_PROGRESS" })
        expect((yield* ws.getNextStep(ID.tenantA, created.id)).step?.id).toBe("upload")
        const tenantOwn = yield* ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} })
        expect((yield* ws.getTask(tenantOwn.id)).currentStep).toBe("first")
      }))

      test("createTask: an entity of another tenant is NotFound, an unavailable workflow BadRequest", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.createTask(ID.tenantA, ID.entityB1, { workflowId: WF.close, context: {} }))).toBe("NotFound")
        expect(yield* tagOf(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.beta, context: {} }))).toBe("BadRequest")
        expect(yield* tagOf(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: "no-such-workflow", context: {} })))
          .toBe("BadRequest")
        expect(yield* ws.listTasks(ID.tenantB, ID.entityB1)).toHaveLength(1)
      }))
    })

    describe("signals", () => {
      test("approve completes the current step; approving the last step completes the task", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: { reason: "looks right" } })
        const after = yield* ws.getTask(ID.taskApprove)
        expect(after).toMatchObject({ status: "IN_PROGRESS", currentStep: "second" })
        const snaps = yield* ws.getSnapshots(ID.tenantA, ID.taskApprove)
        expect(snaps.first).toMatchObject({ decision: "approved", reason: "looks right" })
        expect((yield* ws.getNextStep(ID.tenantA, ID.taskApprove)).steps.map((s) => s.status))
          .toEqual([STEP.COMPLETED, STEP.CURRENT])
        yield* ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {} })
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "COMPLETED", currentStep: null })
        const terminal = yield* failure(ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {} }))
        expect(terminal).toMatchObject({ _tag: "BadRequest", currentStatus: "COMPLETED" })
      }))

      test("reject fails the task; a composite child id resolves to its root", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* ws.signal(ID.tenantA, { taskId: `${ID.taskReview}:review:child`, name: "reject", payload: { reason: "wrong month" } })
        expect(yield* ws.getTask(ID.taskReview)).toMatchObject({ status: "FAILED", currentStep: null })
        expect((yield* ws.getSnapshots(ID.tenantA, ID.taskReview)).review).toMatchObject({ decision: "rejected", reason: "wrong month" })
        expect((yield* ws.getNextStep(ID.tenantA, ID.taskReview)).step).toBeNull()
      }))

      test("file_submitted completes a FILE_UPLOAD step", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* ws.signal(ID.tenantA, { taskId: ID.taskUpload, name: FILE_SUBMITTED_SIGNAL, payload: { source: "bank_statement" } })
        expect((yield* ws.getTask(ID.taskUpload)).currentStep).toBe("review")
        expect(Object.keys(yield* ws.getSnapshots(ID.tenantA, ID.taskUpload))).toEqual(["upload"])
      }))

      test("a signal to another tenant's or a missing task is NotFound and changes nothing", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.signal(ID.tenantA, { taskId: ID.taskBeta, name: "approve", payload: {} }))).toBe("NotFound")
        expect(yield* tagOf(ws.signal(ID.tenantA, { taskId: ID.missing, name: "approve", payload: {} }))).toBe("NotFound")
        expect((yield* ws.getTask(ID.taskBeta)).currentStep).toBe("upload_b")
      }))

      test("row_action applies the subledger rules", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rowAction = (payload: Record<string, unknown>) =>
          ws.signal(ID.tenantA, { taskId: ID.taskReview, name: "user_action", payload: { kind: "row_action", ledger: "expenses", ...payload } })
        yield* rowAction({ action: "edit_cell", rowId: ID.rowNeeds2, field: "amount_gross", value: "41.50" })
        yield* rowAction({ action: "reject_row", rowId: ID.rowNeeds })
        expect(yield* failure(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect(yield* failure(rowAction({ action: "reject_row", rowId: ID.rowRejected })))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect(yield* failure(rowAction({ action: "edit_cell", rowId: ID.rowNeeds2, field: "bogus", value: 1 })))
          .toMatchObject({ _tag: "BadRequest", code: "INVALID_FIELD" })
        expect(yield* failure(rowAction({ action: "edit_cell", rowId: ID.rowRejected, field: "amount_gross", value: 1 })))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect(yield* tagOf(rowAction({ action: "edit_cell", rowId: ID.rowNeeds2, field: "amount_gross", value: "abc" })))
          .toBe("BadRequest")
        expect(yield* tagOf(rowAction({ action: "reject_row", rowId: ID.rowBeta }))).toBe("NotFound")
        // The edit went through and left the row editable.
        expect(yield* ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds2, "merchant", " Cab ")).toMatchObject({ value: "Cab" })
        // Row actions leave the task where it was.
        expect((yield* ws.getTask(ID.taskReview)).currentStep).toBe("review")
      }))

      test("resolve_flag marks a flagged row resolved (the gateway's extension), once, and only from NEEDS_ATTENTION", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rowAction = (payload: Record<string, unknown>) =>
          ws.signal(ID.tenantA, { taskId: ID.taskReview, name: "user_action", payload: { kind: "row_action", ledger: "expenses", ...payload } })
        yield* rowAction({ action: "resolve_flag", rowId: ID.rowNeeds2 })
        expect(yield* failure(rowAction({ action: "resolve_flag", rowId: ID.rowNeeds2 })))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "RESOLVED" })
        expect(yield* failure(rowAction({ action: "resolve_flag", rowId: ID.rowRejected })))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        // A resolved row is reviewed: no more edits or rejects.
        expect(yield* failure(rowAction({ action: "reject_row", rowId: ID.rowNeeds2 })))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "RESOLVED" })
        const events = yield* ws.listEvents(ID.tenantA, ID.taskReview, {})
        expect(events.events.filter((e) => e.type === "row.resolved").map((e) => e.payload)).toEqual([
          expect.objectContaining({ rowId: ID.rowNeeds2, previousStatus: "NEEDS_ATTENTION", newStatus: "RESOLVED", via: "row_action" })
        ])
      }))

      test("a row action needs a row of that task and a current table step", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rowAction = (taskId: string, rowId: string) =>
          ws.signal(ID.tenantA, { taskId, name: "user_action", payload: { kind: "row_action", ledger: "expenses", action: "reject_row", rowId } })
        // taskUpload runs the same workflow but the row is taskReview's: like a missing row.
        expect(yield* tagOf(rowAction(ID.taskUpload, ID.rowNeeds))).toBe("NotFound")
        // A row of no task at all (journal rows are direct-mutation only).
        expect(yield* tagOf(ws.signal(ID.tenantA, {
          taskId: ID.taskReview,
          name: "user_action",
          payload: { kind: "row_action", ledger: "journal_proposals", action: "reject_row", rowId: ID.rowJournal }
        }))).toBe("NotFound")
        // The task moves to its approval step: its rows take no more actions.
        yield* ws.signal(ID.tenantA, { taskId: ID.taskReview, name: "approve", payload: {} })
        expect(yield* failure(rowAction(ID.taskReview, ID.rowNeeds)))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "IN_PROGRESS" })
        yield* ws.signal(ID.tenantA, { taskId: ID.taskReview, name: "approve", payload: {} })
        expect(yield* failure(rowAction(ID.taskReview, ID.rowNeeds)))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "COMPLETED" })
        // Nothing was applied: the row can still be rejected directly.
        expect(yield* ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)).toMatchObject({ newStatus: "REJECTED" })
      }))
    })

    describe("decisions bound to their step", () => {
      const approve = (taskId: string, step?: string, reason?: string) =>
        Effect.flatMap(WorkspaceClient, (ws) =>
          ws.signal(ID.tenantA, {
            taskId,
            name: "approve",
            payload: reason === undefined ? {} : { reason },
            ...(step === undefined ? {} : { expectedStep: step })
          }))
      const reject = (taskId: string, step: string) =>
        Effect.flatMap(WorkspaceClient, (ws) => ws.signal(ID.tenantA, { taskId, name: "reject", payload: {}, expectedStep: step }))

      test("the same decision on a step again is a no-op that succeeds; the task moves once", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* approve(ID.taskApprove, "first", "looks right")
        const snaps = yield* ws.getSnapshots(ID.tenantA, ID.taskApprove)
        yield* approve(ID.taskApprove, "first", "looks right")
        yield* approve(ID.taskApprove, "first") // a retry that lost its comment still names the step
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "IN_PROGRESS", currentStep: "second" })
        expect(yield* ws.getSnapshots(ID.tenantA, ID.taskApprove)).toEqual(snaps)
        // The last step too: a repeat after the task completed still answers as the first did.
        yield* approve(ID.taskApprove, "second")
        yield* approve(ID.taskApprove, "second")
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "COMPLETED", currentStep: null })
      }))

      test("a step decided the other way, or not current, is a Conflict naming the current step", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* approve(ID.taskApprove, "first")
        const other = yield* failure(reject(ID.taskApprove, "first"))
        expect(other).toMatchObject({ _tag: "Conflict", statusCode: 409 })
        expect(other.message).toBe(`Step "first" was already approved; the task is at step "second"`)
        const ahead = yield* failure(approve(ID.taskApprove, "no_such_step"))
        expect(ahead).toMatchObject({ _tag: "Conflict", message: `Step "no_such_step" is not the current step: the task is at step "second"` })
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "IN_PROGRESS", currentStep: "second" })
        // A step that was completed some other way (a file) was never approved: not current, a Conflict.
        expect(yield* tagOf(approve(ID.taskReview, "upload"))).toBe("Conflict")
        yield* reject(ID.taskReview, "review")
        const done = yield* failure(approve(ID.taskReview, "review"))
        expect(done).toMatchObject({
          _tag: "Conflict",
          message: `Step "review" was already rejected; the task is FAILED with no current step`
        })
        yield* reject(ID.taskReview, "review") // the same decision again: a no-op
        expect(yield* ws.getTask(ID.taskReview)).toMatchObject({ status: "FAILED", currentStep: null })
        // Unnamed, a decision on a finished task is still a 400 with currentStatus.
        expect(yield* failure(approve(ID.taskReview))).toMatchObject({ _tag: "BadRequest", currentStatus: "FAILED" })
      }))

      test("a row action for a step that is no longer current is a Conflict and changes nothing", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rowAction = (rowId: string, step: string) =>
          ws.signal(ID.tenantA, {
            taskId: ID.taskReview,
            name: "user_action",
            payload: { kind: "row_action", ledger: "expenses", action: "reject_row", rowId },
            expectedStep: step
          })
        yield* rowAction(ID.rowNeeds2, "review")
        yield* approve(ID.taskReview, "review")
        const late = yield* failure(rowAction(ID.rowNeeds, "review"))
        expect(late).toMatchObject({ _tag: "Conflict", message: `Step "review" was already approved; the task is at step "sign_off"` })
        expect(yield* tagOf(rowAction(ID.rowNeeds, "upload"))).toBe("Conflict")
        // Another task's row is still a 404, whatever step is named.
        expect(yield* tagOf(rowAction(ID.rowBeta, "review"))).toBe("NotFound")
        expect(yield* ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)).toMatchObject({ newStatus: "REJECTED" })
        expect(yield* failure(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds2))).toMatchObject({ currentStatus: "REJECTED" })
      }))

      test("two approvals of one step raced: exactly one step advances (10 tries)", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        for (let i = 0; i < 10; i++) {
          const task = yield* ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} })
          const step = (yield* ws.getTask(task.id)).currentStep!
          expect(step).toBe("first")
          yield* Effect.all([approve(task.id, step, "a"), approve(task.id, step, "b")], { concurrency: 2, discard: true })
          expect(yield* ws.getTask(task.id)).toMatchObject({ status: "IN_PROGRESS", currentStep: "second" })
          expect(Object.keys(yield* ws.getSnapshots(ID.tenantA, task.id))).toEqual(["first"])
        }
      }), 60_000)

      test("an approval and a rejection of one step raced: one wins, the other is a Conflict (10 tries)", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        for (let i = 0; i < 10; i++) {
          const task = yield* ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} })
          const [a, r] = yield* Effect.all([Effect.result(approve(task.id, "first")), Effect.result(reject(task.id, "first"))], {
            concurrency: 2
          })
          expect([a._tag, r._tag].sort()).toEqual(["Failure", "Success"])
          const lost = Result.isFailure(a) ? a.failure : Result.isFailure(r) ? r.failure : undefined
          expect(lost).toMatchObject({ _tag: "Conflict" })
          expect(yield* ws.getTask(task.id)).toMatchObject(
            Result.isSuccess(a) ? { status: "IN_PROGRESS", currentStep: "second" } : { status: "FAILED", currentStep: null }
          )
        }
      }), 60_000)
    })

    describe("inbox, assignment and claims", () => {
      const NOW = "2026-11-10T00:00:00.000Z"
      const page = (query: Partial<Parameters<WorkspaceClient["Service"]["inbox"]>[1]> = {}) =>
        Effect.flatMap(WorkspaceClient, (ws) => ws.inbox(ID.tenantA, { now: NOW, limit: 50, ...query }))
      /** As `actor`, with an identity configured at the edge (assignment enforced), in `groups`. */
      const asPerson = (actor: string, groups: ReadonlyArray<string> = []) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
        self.pipe(withActor(actor), withIdentity({ groups, enforced: true }))

      test("the tenant's waiting steps, oldest first, across entities; another tenant's never; pages after a position", Effect.gen(function*() {
        const all = yield* page()
        expect(all.items.map((i) => i.task.id)).toEqual([ID.taskReview, ID.taskUpload, ID.taskApprove])
        expect(all.more).toBe(false)
        expect(all.items[0]).toMatchObject({
          entity: { id: ID.entityA1, name: "Alpha US" },
          step: { id: "review", title: "Review expenses", component: "TABLE_REVIEW" },
          waitingSince: "2026-10-01T09:00:00.000Z",
          overdue: false,
          assignees: [],
          mayAct: true
        })
        const first = yield* page({ limit: 1 })
        expect(first.items.map((i) => i.task.id)).toEqual([ID.taskReview])
        expect(first.more).toBe(true)
        const rest = yield* page({ limit: 5, after: first.last! })
        expect(rest.items.map((i) => i.task.id)).toEqual([ID.taskUpload, ID.taskApprove])
        expect((yield* page({ entityId: ID.entityB1 })).items).toEqual([])
        expect((yield* page({ awaiting: "FILE_UPLOAD" })).items.map((i) => i.task.id)).toEqual([ID.taskUpload])
      }))

      test("assignment holds with an identity (forwarded with the actor); the step's assignees act; due and overdue", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {}, expectedStep: "first" })
        const second = { taskId: ID.taskApprove, name: "approve", payload: {}, expectedStep: "second" }
        const refused = yield* failure(ws.signal(ID.tenantA, second).pipe(asPerson("bob@alpha.example")))
        expect(refused).toMatchObject({ _tag: "Forbidden" })
        expect(refused.message).toContain("waits for ann@alpha.example, group:approvers")
        const mine = yield* page({ assignee: "me" }).pipe(asPerson("bob@alpha.example", ["approvers"]))
        expect(mine.items.map((i) => [i.task.id, i.mayAct, i.dueAt !== undefined])).toEqual([[ID.taskApprove, true, true]])
        const later = new Date(Date.parse(mine.items[0]!.dueAt!) + 1000).toISOString()
        expect((yield* page({ overdue: true, now: later })).items.map((i) => i.task.id)).toEqual([ID.taskApprove])
        expect((yield* page({ overdue: true })).items).toEqual([])
        yield* ws.signal(ID.tenantA, second).pipe(asPerson("bob@alpha.example", ["approvers"]))
        expect(yield* ws.getTask(ID.taskApprove)).toMatchObject({ status: "COMPLETED" })
      }))

      test("claims: named callers only; a second claimant is a Conflict naming the holder; the holder releases; moving on releases", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.claimStep(ID.tenantA, ID.taskApprove, false))).toBe("Forbidden")
        expect(yield* tagOf(ws.claimStep(ID.tenantB, ID.taskApprove, false).pipe(asPerson("ann@alpha.example")))).toBe("NotFound")
        const claim = yield* ws.claimStep(ID.tenantA, ID.taskApprove, false).pipe(asPerson("ann@alpha.example"))
        expect(claim).toMatchObject({ stepId: "first", by: "ann@alpha.example", override: false })
        expect(yield* ws.claimStep(ID.tenantA, ID.taskApprove, false).pipe(asPerson("ann@alpha.example"))).toEqual(claim)
        const taken = yield* failure(ws.claimStep(ID.tenantA, ID.taskApprove, false).pipe(asPerson("bob@alpha.example")))
        expect(taken).toMatchObject({ _tag: "Conflict" })
        expect(taken.message).toContain("claimed by ann@alpha.example")
        expect(yield* tagOf(ws.releaseClaim(ID.tenantA, ID.taskApprove).pipe(asPerson("bob@alpha.example")))).toBe("Forbidden")
        expect((yield* page()).items.find((i) => i.task.id === ID.taskApprove)?.claim?.by).toBe("ann@alpha.example")
        yield* ws.releaseClaim(ID.tenantA, ID.taskApprove).pipe(asPerson("ann@alpha.example"))
        expect((yield* page()).items.find((i) => i.task.id === ID.taskApprove)?.claim).toBeUndefined()
        yield* ws.claimStep(ID.tenantA, ID.taskApprove, false).pipe(asPerson("bob@alpha.example"))
        yield* ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {}, expectedStep: "first" })
        const moved = (yield* page()).items.find((i) => i.task.id === ID.taskApprove)
        expect(moved?.step.id).toBe("second")
        expect(moved?.claim).toBeUndefined()
        const { events } = yield* ws.listEvents(ID.tenantA, ID.taskApprove)
        expect(events.filter((e) => e.type.startsWith("step.claimed") || e.type === "step.released").map((e) => e.type))
          .toEqual(["step.claimed", "step.released", "step.claimed"])
        expect(events.filter((e) => e.type === "task.waiting").map((e) => (e.payload as { stepId: string }).stepId)).toEqual(["second"])
      }))

      test("a claim and a release retried with their Idempotency-Key get the first answer and write nothing; the key is its caller's", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const keyed = withIdempotencyKey
        const claimed = yield* keyed("claim-1")(ws.claimStep(ID.tenantA, ID.taskApprove, false)).pipe(asPerson("ann@alpha.example"))
        yield* keyed("release-1")(ws.releaseClaim(ID.tenantA, ID.taskApprove)).pipe(asPerson("ann@alpha.example"))
        // The claim's retry after the release: its first answer, not a new claim.
        expect(yield* keyed("claim-1")(ws.claimStep(ID.tenantA, ID.taskApprove, false)).pipe(asPerson("ann@alpha.example"))).toEqual(claimed)
        expect((yield* page()).items.find((i) => i.task.id === ID.taskApprove)?.claim).toBeUndefined()
        // Another person's claim: the release's retry does not release it.
        const bobs = yield* ws.claimStep(ID.tenantA, ID.taskApprove, false).pipe(asPerson("bob@alpha.example", ["approvers"]))
        yield* keyed("release-1")(ws.releaseClaim(ID.tenantA, ID.taskApprove)).pipe(asPerson("ann@alpha.example"))
        expect((yield* page()).items.find((i) => i.task.id === ID.taskApprove)?.claim).toEqual(bobs)
        // Ann's key sent by Bob: the key reused (a 409 saying so), not the claim's answer.
        const reused = yield* failure(keyed("claim-1")(ws.claimStep(ID.tenantA, ID.taskApprove, false)).pipe(asPerson("bob@alpha.example", ["approvers"])))
        expect(reused).toMatchObject({ _tag: "Conflict" })
        expect(reused.message).toContain(`Idempotency-Key "claim-1" was already used for a different request`)
        const released = yield* failure(keyed("release-1")(ws.releaseClaim(ID.tenantA, ID.taskApprove)).pipe(asPerson("bob@alpha.example", ["approvers"])))
        expect(released).toMatchObject({ _tag: "Conflict" })
        expect(released.message).toContain(`Idempotency-Key "release-1" was already used for a different request`)
        expect((yield* page()).items.find((i) => i.task.id === ID.taskApprove)?.claim).toEqual(bobs)
        const { events } = yield* ws.listEvents(ID.tenantA, ID.taskApprove)
        expect(events.filter((e) => e.type === "step.claimed" || e.type === "step.released").map((e) => `${e.type}:${(e.payload as { holder?: string }).holder}`))
          .toEqual(["step.claimed:ann@alpha.example", "step.released:ann@alpha.example", "step.claimed:bob@alpha.example"])
      }))
    })

    describe("idempotent writes", () => {
      const keyed = withIdempotencyKey

      test("a write retried with the same key returns the first result and writes nothing again", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const input = { workflowId: WF.approvals, context: { period: "2026-11" } }
        const first = yield* keyed("create-1")(ws.createTask(ID.tenantA, ID.entityA2, input))
        const again = yield* keyed("create-1")(ws.createTask(ID.tenantA, ID.entityA2, { workflowId: WF.approvals, context: { period: "2026-11" } }))
        expect(again).toEqual(first)
        expect((yield* ws.listTasks(ID.tenantA, ID.entityA2)).filter((t) => t.id === first.id)).toHaveLength(1)
        expect(yield* ws.listTasks(ID.tenantA, ID.entityA2)).toHaveLength(3)
        // A decision without a named step, retried with its key, does not decide the next step.
        yield* keyed("approve-1")(ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {} }))
        yield* keyed("approve-1")(ws.signal(ID.tenantA, { taskId: ID.taskApprove, name: "approve", payload: {} }))
        expect((yield* ws.getTask(ID.taskApprove)).currentStep).toBe("second")
        // A row rejected once: its retry gets the first answer, not a 400 for the row already rejected.
        const rejected = yield* keyed("reject-1")(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds))
        expect(yield* keyed("reject-1")(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds))).toEqual(rejected)
        const rows = [{ data: { amount: 1 } }, { data: { amount: 2 } }]
        const ingested = yield* keyed("ingest-1")(ws.ingestData(ID.tenantA, { taskId: ID.taskReview, rows }, Option.none()))
        expect(yield* keyed("ingest-1")(ws.ingestData(ID.tenantA, { taskId: ID.taskReview, rows }, Option.none()))).toEqual(ingested)
        const doc = { taskId: ID.taskReview, source: "s", filename: "a.txt", contentType: "text/plain", bytes: new Uint8Array([1, 2, 3]) }
        const stored = yield* keyed("doc-1")(ws.putDocument(ID.tenantA, doc, Option.none()))
        expect(yield* keyed("doc-1")(ws.putDocument(ID.tenantA, { ...doc, bytes: new Uint8Array([1, 2, 3]) }, Option.none())))
          .toEqual(stored)
        expect((yield* ws.listDocuments(ID.tenantA, ID.taskReview, { limit: 20 })).map((d) => d.id)).toEqual([stored.id, ID.docNew, ID.docOld])
        const session = yield* keyed("gl-1")(ws.createGlSession(ID.tenantB, "xero"))
        expect(yield* keyed("gl-1")(ws.createGlSession(ID.tenantB, "xero"))).toEqual(session)
        yield* keyed("gl-2")(ws.deleteGlConnection(ID.tenantA))
        yield* keyed("gl-2")(ws.deleteGlConnection(ID.tenantA))
        const event = { type: "t", source: "w", seq: 40, payload: { n: 1 } }
        const appended = yield* keyed("event-1")(ws.appendEvent(ID.tenantA, ID.taskUpload, event))
        expect(yield* keyed("event-1")(ws.appendEvent(ID.tenantA, ID.taskUpload, event))).toEqual(appended)
      }), 60_000)

      test("the same key with a different request is a Conflict that says so; keys are per tenant", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* keyed("k-1")(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: {} }))
        const body = yield* failure(keyed("k-1")(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.approvals, context: { x: 1 } })))
        expect(body).toMatchObject({ _tag: "Conflict", statusCode: 409 })
        expect(body.message).toContain(`Idempotency-Key "k-1" was already used for a different request`)
        expect(body.message).toContain("Stripe")
        // Another operation with the key: refused too, and nothing done.
        expect(yield* tagOf(keyed("k-1")(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))).toBe("Conflict")
        expect(yield* ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)).toMatchObject({ newStatus: "REJECTED" })
        expect(yield* ws.listTasks(ID.tenantA, ID.entityA1)).toHaveLength(5)
        // Another tenant's key of the same name is its own.
        expect((yield* keyed("k-1")(ws.createGlSession(ID.tenantB, undefined))).consumerId.length).toBeGreaterThan(0)
      }))

      test("a failed write stores nothing under its key: the retry runs again", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(keyed("k-2")(ws.rejectRow(ID.tenantA, "expenses", ID.rowRejected)))).toBe("BadRequest")
        expect(yield* tagOf(keyed("k-2")(ws.createTask(ID.tenantA, ID.entityB1, { workflowId: WF.close, context: {} })))).toBe("NotFound")
        const created = yield* keyed("k-2")(ws.createTask(ID.tenantA, ID.entityA1, { workflowId: WF.close, context: {} }))
        expect((yield* ws.getTask(created.id)).currentStep).toBe("upload")
      }))

      test("a malformed key is a BadRequest before anything is written", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(keyed("")(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))).toBe("BadRequest")
        expect(yield* tagOf(keyed("x".repeat(256))(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))).toBe("BadRequest")
        expect(yield* tagOf(keyed("has space")(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)))).toBe("BadRequest")
        expect(yield* ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)).toMatchObject({ newStatus: "REJECTED" })
      }))
    })

    describe("events", () => {
      test("events are listed in the store's order, each producer's by seq; append returns the persisted record", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const events = (tenantId: string, taskId: string) => Effect.map(ws.listEvents(tenantId, taskId), (p) => p.events)
        const seeded = yield* events(ID.tenantA, ID.taskReview)
        expect(seeded.map((e) => e.seq)).toEqual([1, 2])
        expect(seeded[0]).toMatchObject({
          taskId: ID.taskReview, type: "reasoning.delta", source: "worker", sourceLabel: "Matcher", seq: 1,
          payload: { text: "Looking at the statement" }, groupKey: "g1", origin: "producer"
        })
        const event = yield* ws.appendEvent(ID.tenantA, ID.taskReview, {
          type: "source.submitted", source: "worker", seq: 5, payload: { n: 1 }
        })
        expect(event).toMatchObject({ taskId: ID.taskReview, type: "source.submitted", source: "worker", seq: 5, payload: { n: 1 }, origin: "producer" })
        expect(Number.isNaN(Date.parse(event.createdAt))).toBe(false)
        // A late lower seq is stored, and read where it was stored: after what a reader had.
        yield* ws.appendEvent(ID.tenantA, ID.taskReview, { type: "step.completed", source: "worker", seq: 3, payload: {} })
        const all = yield* events(ID.tenantA, ID.taskReview)
        expect(all.map((e) => e.seq)).toEqual([1, 2, 5, 3])
        expect(new Set(all.map((e) => e.position)).size).toBe(4)
        // Paging by position: every event once, the answer says where to go on.
        const first = yield* ws.listEvents(ID.tenantA, ID.taskReview, { limit: 3 })
        expect(first).toMatchObject({ hasMore: true, nextAfter: all[2]!.position })
        const rest = yield* ws.listEvents(ID.tenantA, ID.taskReview, { after: first.nextAfter, limit: 3 })
        expect(rest.events.map((e) => e.seq)).toEqual([3])
        expect(rest.hasMore).toBeUndefined()
        expect(yield* events(ID.tenantA, ID.taskUpload)).toEqual([])
      }))

      test("a producer's seqs are its own: another source, and the gateway's records, never take them", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const a = yield* ws.appendEvent(ID.tenantA, ID.taskUpload, { type: "x", source: "worker", seq: 1, payload: {} })
        const b = yield* ws.appendEvent(ID.tenantA, ID.taskUpload, { type: "x", source: "scanner", seq: 1, payload: {} })
        const r = yield* ws.recordEvent(ID.tenantA, ID.taskUpload, { origin: "gateway", type: "agent.action", source: "agent:x", payload: {} })
        const c = yield* ws.appendEvent(ID.tenantA, ID.taskUpload, { type: "x", source: "worker", seq: 2, payload: {} })
        expect([a.origin, b.origin, r.origin, c.origin]).toEqual(["producer", "producer", "gateway", "producer"])
        expect(String(r.seq)).toBe(r.position.split("-").pop())
        const page = yield* ws.listEvents(ID.tenantA, ID.taskUpload)
        expect(page.events.map((e) => e.position)).toEqual([a.position, b.position, r.position, c.position])
        // An agent's own events without a seq take the next of its source.
        const n0 = yield* ws.recordEvent(ID.tenantA, ID.taskUpload, { origin: "agent", type: "x", source: "agent:y", payload: {} })
        const n1 = yield* ws.recordEvent(ID.tenantA, ID.taskUpload, { origin: "agent", type: "x", source: "agent:y", payload: {} })
        expect([n0.seq, n1.seq, n0.origin]).toEqual([0, 1, "agent"])
      }))

      test("an identical re-post is idempotent; a different body for a taken seq is a Conflict", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const dto = { type: "reasoning.delta", source: "worker", seq: 7, payload: { text: "a" }, groupKey: "g2" }
        const first = yield* ws.appendEvent(ID.tenantA, ID.taskUpload, dto)
        const again = yield* ws.appendEvent(ID.tenantA, ID.taskUpload, dto)
        expect(again).toEqual(first)
        expect((yield* ws.listEvents(ID.tenantA, ID.taskUpload)).events).toHaveLength(1)
        expect(yield* tagOf(ws.appendEvent(ID.tenantA, ID.taskUpload, { ...dto, payload: { text: "b" } }))).toBe("Conflict")
        expect(yield* tagOf(ws.appendEvent(ID.tenantA, ID.taskReview, { ...dto, seq: 1 }))).toBe("Conflict")
        expect((yield* ws.listEvents(ID.tenantA, ID.taskUpload)).events).toEqual([first])
      }))

      test("events are scoped to the tenant", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const dto = { type: "x", source: "worker", seq: 1, payload: {} }
        expect(yield* tagOf(ws.appendEvent(ID.tenantA, ID.taskBeta, dto))).toBe("NotFound")
        expect(yield* tagOf(ws.appendEvent(ID.tenantA, ID.missing, dto))).toBe("NotFound")
        expect(yield* tagOf(ws.listEvents(ID.tenantB, ID.taskReview))).toBe("NotFound")
      }))

      test("a composite child id has its own event stream", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const child = `${ID.taskReview}:review:child`
        yield* ws.appendEvent(ID.tenantA, child, { type: "x", source: "worker", seq: 1, payload: { child: true } })
        expect((yield* ws.listEvents(ID.tenantA, child)).events.map((e) => [e.taskId, e.seq])).toEqual([[child, 1]])
        expect((yield* ws.listEvents(ID.tenantA, ID.taskReview)).events.map((e) => e.seq)).toEqual([1, 2])
      }))
    })

    describe("documents", () => {
      test("listDocuments: newest first, limit, source filter, scoped", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const all = yield* ws.listDocuments(ID.tenantA, ID.taskReview, { limit: 20 })
        expect(all.map((d) => d.id)).toEqual([ID.docNew, ID.docOld])
        expect(all[1]).toEqual({
          id: ID.docOld, tenantId: ID.tenantA, taskId: ID.taskReview, source: "bank_statement", filename: "statement.txt",
          contentType: "text/plain", sizeBytes: DOC_OLD_BYTES.length, uploadedAt: "2026-10-01T10:00:00.000Z"
        })
        expect((yield* ws.listDocuments(ID.tenantA, ID.taskReview, { limit: 1 })).map((d) => d.id)).toEqual([ID.docNew])
        expect((yield* ws.listDocuments(ID.tenantA, ID.taskReview, { source: "bank_statement", limit: 20 })).map((d) => d.id))
          .toEqual([ID.docOld])
        expect(yield* ws.listDocuments(ID.tenantA, ID.taskReview, { source: "nothing", limit: 20 })).toEqual([])
        expect((yield* ws.listDocuments(ID.tenantA, `${ID.taskReview}:review:child`, { limit: 20 })).map((d) => d.id))
          .toEqual([ID.docNew, ID.docOld])
        expect(yield* ws.listDocuments(ID.tenantB, ID.taskReview, { limit: 20 })).toEqual([])
      }))

      test("openDocument returns the record and exactly the stored bytes; scoped", Effect.scoped(Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const { body, document } = yield* ws.openDocument(ID.tenantA, ID.docNew)
        expect(document).toMatchObject({
          id: ID.docNew, filename: "receipts.bin", contentType: "application/octet-stream", sizeBytes: DOC_NEW_BYTES.length
        })
        expect(new Uint8Array(yield* collect(body))).toEqual(DOC_NEW_BYTES)
        expect(yield* tagOf(ws.openDocument(ID.tenantB, ID.docNew))).toBe("NotFound")
        expect(yield* tagOf(ws.openDocument(ID.tenantA, ID.missing))).toBe("NotFound")
        expect(yield* tagOf(ws.openDocument(ID.tenantA, "not-a-uuid"))).toBe("NotFound")
      })))

      test("putDocument stores the bytes and, with a signal, advances the step with documentRef in the payload", Effect.scoped(Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const bytes = Uint8Array.from({ length: 3 * 1024 * 1024 + 7 }, (_, i) => (i * 31 + 7) % 251)
        const doc = yield* ws.putDocument(ID.tenantA, {
          taskId: ID.taskUpload, source: "bank_statement", filename: "Kontoauszug Oktober.pdf", contentType: "application/pdf",
          period: "2026-10", schemaSlug: "bank-statement", bytes
        }, Option.some({ taskId: ID.taskUpload, name: FILE_SUBMITTED_SIGNAL, payload: { source: "bank_statement" } }))
        expect(doc).toMatchObject({
          tenantId: ID.tenantA, taskId: ID.taskUpload, source: "bank_statement", filename: "Kontoauszug Oktober.pdf",
          contentType: "application/pdf", sizeBytes: bytes.length, period: "2026-10", schemaSlug: "bank-statement"
        })
        expect((yield* ws.getTask(ID.taskUpload)).currentStep).toBe("review")
        expect((yield* ws.getSnapshots(ID.tenantA, ID.taskUpload)).upload).toMatchObject({ documentRef: doc.id, source: "bank_statement" })
        expect((yield* ws.listDocuments(ID.tenantA, ID.taskUpload, { limit: 20 })).map((d) => d.id)).toEqual([doc.id])
        const opened = yield* ws.openDocument(ID.tenantA, doc.id)
        expect(opened.document).toEqual(doc)
        expect(Buffer.compare(yield* collect(opened.body), Buffer.from(bytes))).toBe(0)
      })), 60_000)

      test("putDocument without a signal leaves the task; newest first after it", Effect.scoped(Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const doc = yield* ws.putDocument(ID.tenantA, {
          taskId: ID.taskReview, source: "receipts", filename: "empty.txt", contentType: "text/plain", bytes: new Uint8Array(0)
        }, Option.none())
        expect(doc.sizeBytes).toBe(0)
        expect(doc).not.toHaveProperty("period")
        expect((yield* ws.listDocuments(ID.tenantA, ID.taskReview, { limit: 20 })).map((d) => d.id)).toEqual([doc.id, ID.docNew, ID.docOld])
        expect((yield* ws.getTask(ID.taskReview)).currentStep).toBe("review")
        expect((yield* collect((yield* ws.openDocument(ID.tenantA, doc.id)).body)).length).toBe(0)
      })))

      test("putDocument: another tenant's task is NotFound; a signal the task cannot take stores nothing", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const doc = { source: "x", filename: "x.txt", contentType: "text/plain", bytes: new Uint8Array([1]) }
        expect(yield* tagOf(ws.putDocument(ID.tenantA, { ...doc, taskId: ID.taskBeta }, Option.none()))).toBe("NotFound")
        expect(yield* tagOf(ws.putDocument(
          ID.tenantA,
          { ...doc, taskId: ID.taskCompleted },
          Option.some({ taskId: ID.taskCompleted, name: "approve", payload: {} })
        ))).toBe("BadRequest")
        // A file asked to complete a step of a finished task (before: stored, "signaled", dropped).
        const late = yield* failure(ws.putDocument(
          ID.tenantA,
          { ...doc, taskId: ID.taskCompleted },
          Option.some({ taskId: ID.taskCompleted, name: FILE_SUBMITTED_SIGNAL, payload: {} })
        ))
        expect(late).toMatchObject({ _tag: "BadRequest", message: "Task is COMPLETED with no step for a submitted file to complete" })
        expect(yield* ws.listDocuments(ID.tenantA, ID.taskCompleted, { limit: 20 })).toEqual([])
        expect(yield* ws.listDocuments(ID.tenantB, ID.taskBeta, { limit: 20 })).toHaveLength(1)
      }))

      test("putDocument and ingestData with a signal naming a step no longer current: a Conflict; with a decision's signal: a BadRequest; nothing stored", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const doc = { taskId: ID.taskReview, source: "late", filename: "late.txt", contentType: "text/plain", bytes: new Uint8Array([1]) }
        const stale = { taskId: ID.taskReview, name: FILE_SUBMITTED_SIGNAL, expectedStep: "upload" }
        const conflict = yield* failure(ws.putDocument(ID.tenantA, doc, Option.some({ ...stale, payload: {} })))
        expect(conflict).toMatchObject({
          _tag: "Conflict",
          message: `Step "upload" is not the current step: the task is at step "review"`
        })
        expect(yield* ws.listDocuments(ID.tenantA, ID.taskReview, { source: "late", limit: 20 })).toEqual([])
        expect(yield* tagOf(ws.ingestData(ID.tenantA, { taskId: ID.taskReview, rows: [{ data: { a: 1 } }] }, Option.some(stale))))
          .toBe("Conflict")
        // A write sends no decision's signal, in any spelling (src/domain/signalNames.ts): refused before anything else.
        expect(yield* tagOf(ws.putDocument(ID.tenantA, doc, Option.some({ ...stale, name: "\u0430pprove", payload: {} }))))
          .toBe("BadRequest")
        expect(yield* tagOf(ws.ingestData(ID.tenantA, { taskId: ID.taskReview, rows: [{ data: { a: 1 } }] }, Option.some({ ...stale, name: "reject" }))))
          .toBe("BadRequest")
        expect(yield* ws.listDocuments(ID.tenantA, ID.taskReview, { source: "late", limit: 20 })).toEqual([])
        expect((yield* ws.getTask(ID.taskReview)).currentStep).toBe("review")
        // Named for the step that is current, the file completes it.
        yield* ws.putDocument(ID.tenantA, { ...doc, taskId: ID.taskUpload }, Option.some({
          taskId: ID.taskUpload, name: FILE_SUBMITTED_SIGNAL, payload: {}, expectedStep: "upload"
        }))
        expect((yield* ws.getTask(ID.taskUpload)).currentStep).toBe("review")
      }))
    })

    describe("data ingest", () => {
      test("ingestData stores rows and returns one id per row, in order", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rows = yield* ws.ingestData(ID.tenantA, {
          taskId: ID.taskReview, kind: "expense",
          rows: [{ data: { amount: 1 } }, { data: { amount: 2 }, sourceRef: { line: 2 } }, { data: { nested: { a: [1, 2] } } }]
        }, Option.none())
        expect(rows).toHaveLength(3)
        expect(rows.every((r) => r.signaled === false)).toBe(true)
        expect(new Set(rows.map((r) => r.id)).size).toBe(3)
        rows.forEach((r) => expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i))
      }))

      test("ingestData's ids are time-ordered (UUIDv7): a later batch's ids sort after an earlier one's", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const batch = () => ws.ingestData(ID.tenantA, { taskId: ID.taskReview, rows: Array.from({ length: 50 }, (_, i) => ({ data: { i } })) }, Option.none())
        const first = (yield* batch()).map((r) => r.id)
        yield* Effect.sleep("3 millis")
        const second = (yield* batch()).map((r) => r.id)
        for (const id of [...first, ...second]) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
        // The primary-key index grows at its right edge: every id of the second batch after every id of the first.
        expect(second.reduce((a, b) => (a < b ? a : b)) > first.reduce((a, b) => (a > b ? a : b))).toBe(true)
        expect(new Set([...first, ...second]).size).toBe(100)
      }))

      test("ingestData with a signal records one per row", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const rows = yield* ws.ingestData(
          ID.tenantA,
          { taskId: `${ID.taskReview}:review:child`, rows: [{ data: { a: 1 } }, { data: { a: 2 } }] },
          Option.some({ taskId: `${ID.taskReview}:review:child`, name: "records_added" })
        )
        expect(rows.map((r) => r.signaled)).toEqual([true, true])
        expect((yield* ws.getTask(ID.taskReview)).currentStep).toBe("review")
      }))

      test("ingestData: another tenant's task is NotFound; a signal the task cannot take is BadRequest", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.ingestData(ID.tenantA, { taskId: ID.taskBeta, rows: [{ data: {} }] }, Option.none()))).toBe("NotFound")
        expect(yield* tagOf(ws.ingestData(
          ID.tenantA,
          { taskId: ID.taskCompleted, rows: [{ data: {} }] },
          Option.some({ taskId: ID.taskCompleted, name: "approve" })
        ))).toBe("BadRequest")
      }))
    })

    describe("subledgers", () => {
      test("rejectRow: NEEDS_ATTENTION to REJECTED, then 400 with currentStatus", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds)).toEqual({ status: "OK", rowId: ID.rowNeeds, newStatus: "REJECTED" })
        const again = yield* failure(ws.rejectRow(ID.tenantA, "expenses", ID.rowNeeds))
        expect(again).toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect(yield* failure(ws.rejectRow(ID.tenantA, "expenses", ID.rowRejected)))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect((yield* ws.rejectRow(ID.tenantA, "journal_proposals", ID.rowJournal)).newStatus).toBe("REJECTED")
      }))

      test("rejectRow: another tenant's row, another ledger's row, an unknown ledger are NotFound", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* tagOf(ws.rejectRow(ID.tenantA, "expenses", ID.rowBeta))).toBe("NotFound")
        expect(yield* tagOf(ws.rejectRow(ID.tenantA, "journal_proposals", ID.rowNeeds))).toBe("NotFound")
        expect(yield* tagOf(ws.rejectRow(ID.tenantA, "no_such_ledger", ID.rowNeeds))).toBe("NotFound")
        expect(yield* tagOf(ws.rejectRow(ID.tenantA, "expenses", ID.missing))).toBe("NotFound")
        expect((yield* ws.rejectRow(ID.tenantB, "expenses", ID.rowBeta)).newStatus).toBe("REJECTED")
      }))

      test("updateRow coerces values and refuses bad fields, bad values and non-editable rows", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        expect(yield* ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "amount_gross", "12.50"))
          .toEqual({ status: "OK", rowId: ID.rowNeeds, field: "amount_gross", value: 12.5 })
        expect((yield* ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "amount_gross", 99)).value).toBe(99)
        expect((yield* ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "currency", "eur")).value).toBe("EUR")
        expect((yield* ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "description", null)).value).toBeNull()
        const badValue = yield* failure(ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "amount_gross", "12.345"))
        expect(badValue).toMatchObject({ _tag: "BadRequest" })
        expect(badValue.message).toContain("amount_gross")
        expect(yield* failure(ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "amount_gross", "abc")))
          .toMatchObject({ _tag: "BadRequest" })
        expect(yield* failure(ws.updateRow(ID.tenantA, "expenses", ID.rowNeeds, "status", "OK")))
          .toMatchObject({ _tag: "BadRequest", code: "INVALID_FIELD" })
        expect(yield* failure(ws.updateRow(ID.tenantA, "expenses", ID.rowRejected, "amount_gross", 1)))
          .toMatchObject({ _tag: "BadRequest", currentStatus: "REJECTED" })
        expect(yield* tagOf(ws.updateRow(ID.tenantA, "expenses", ID.rowBeta, "amount_gross", 1))).toBe("NotFound")
        expect((yield* ws.updateRow(ID.tenantA, "journal_proposals", ID.rowJournal, "amount", "250.00")).value).toBe(250)
      }))
    })

    describe("GL", () => {
      test("getGlConnection returns the tenant's connection or none", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const a = yield* ws.getGlConnection(ID.tenantA)
        expect(Option.getOrNull(a)).toEqual({
          tenantId: ID.tenantA, provider: "local", service: "quickbooks_online", status: "ACTIVE",
          connectedAt: "2026-09-01T12:00:00.000Z",
          metadata: { name: "Alpha QBO", service: "quickbooks_online", updated_at: "2026-11-20T06:30:00.000Z" }
        })
        expect(Option.isNone(yield* ws.getGlConnection(ID.tenantB))).toBe(true)
      }))

      test("createGlSession returns a session URL and a consumer id", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const one = yield* ws.createGlSession(ID.tenantB, "xero")
        const two = yield* ws.createGlSession(ID.tenantB, undefined)
        expect(() => new URL(one.sessionUrl)).not.toThrow()
        expect(one.consumerId.length).toBeGreaterThan(0)
        expect(two.consumerId).not.toBe(one.consumerId)
        expect(Option.isNone(yield* ws.getGlConnection(ID.tenantB))).toBe(true)
        const unknown = yield* failure(ws.createGlSession(ID.tenantB, "mybank"))
        expect(unknown, JSON.stringify(unknown)).toMatchObject({ _tag: "BadRequest" })
        expect((unknown as { message: string }).message).toContain("known services: quickbooks_online, xero")
      }))

      test("deleteGlConnection removes the connection and is idempotent", Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        yield* ws.deleteGlConnection(ID.tenantA)
        expect(Option.isNone(yield* ws.getGlConnection(ID.tenantA))).toBe(true)
        yield* ws.deleteGlConnection(ID.tenantA)
        yield* ws.deleteGlConnection(ID.tenantB)
        expect(Option.isNone(yield* ws.getGlConnection(ID.tenantA))).toBe(true)
      }))
    })
  })
}
