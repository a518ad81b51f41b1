/**
 * The runbook engine's decisions, pure: what one delivered signal does to a task or a row.
 * Both workspaces apply them: the embedded store loads the state, calls these and writes
 * the result in the transaction that marks the signal delivered.
 *
 * A signal that no longer applies (the task moved on, the row changed status) is consumed
 * with an `ignored: ...` outcome rather than retried: retrying cannot change a rule's answer.
 */
import type { Scalar } from "../api/resources.js"
import { decideEdit, decideReject } from "./ledgers.js"
import type { Workspace } from "./model.js"
import { completeCurrentStep, FILE_SUBMITTED_SIGNAL, isTerminal } from "./runbook.js"

export interface PendingSignal {
  readonly name: string
  readonly payload: Record<string, unknown>
  /** The step that was current when the signal was accepted; null when it was not step-bound. */
  readonly expectedStep: string | null
}

export type TaskOutcome =
  | {
    readonly _tag: "changed"
    readonly status: string
    readonly currentStep: string | null
    readonly snapshots: Record<string, unknown>
  }
  | { readonly _tag: "ignored"; readonly reason: string }

/** Signals that decide the current step. Anything else is recorded and consumed as a no-op. */
export const STEP_SIGNALS: ReadonlySet<string> = new Set(["approve", "reject", FILE_SUBMITTED_SIGNAL])

export const isRowAction = (s: { readonly name: string; readonly payload: Record<string, unknown> }) =>
  s.name === "user_action" && s.payload.kind === "row_action"

const ignored = (reason: string): TaskOutcome => ({ _tag: "ignored", reason })

export const applyToTask = (
  task: Workspace.Task,
  runbook: Workspace.Runbook | null,
  snapshots: Record<string, unknown>,
  signal: PendingSignal,
  now: string
): TaskOutcome => {
  if (!STEP_SIGNALS.has(signal.name)) return ignored(`no handler for signal "${signal.name}"`)
  if (runbook === null || task.currentStep === null) return ignored(`task is ${task.status} with no current step`)
  if (signal.expectedStep !== null && signal.expectedStep !== task.currentStep) {
    return ignored(`step "${signal.expectedStep}" is no longer current (now "${task.currentStep}")`)
  }
  const step = runbook.steps.find((s) => s.id === task.currentStep)
  if (signal.name === "approve" || signal.name === "reject") {
    const approved = signal.name === "approve"
    const next = approved ? completeCurrentStep(task, runbook) : { status: "FAILED", currentStep: null }
    return {
      _tag: "changed",
      ...next,
      snapshots: {
        ...snapshots,
        [task.currentStep]: { decision: approved ? "approved" : "rejected", reason: signal.payload.reason ?? null, decidedAt: now }
      }
    }
  }
  // file_submitted completes a FILE_UPLOAD step only; on any other step it is just recorded.
  if (step?.displayHint.component !== "FILE_UPLOAD") return ignored(`current step "${task.currentStep}" is not a FILE_UPLOAD step`)
  return {
    _tag: "changed",
    ...completeCurrentStep(task, runbook),
    snapshots: { ...snapshots, [task.currentStep]: { ...signal.payload, submittedAt: now } }
  }
}

/** A decision recorded but not yet applied (the embedded store's outbox): it already decides its step. */
export interface PendingDecision {
  readonly name: string
  readonly expectedStep: string | null
}

const DECISIONS: Readonly<Record<string, "approved" | "rejected">> = { approve: "approved", reject: "rejected" }

export const isDecision = (name: string) => name === "approve" || name === "reject"

/** How `step` was decided: by an applied decision (its snapshot) or one still pending; undefined if it was not. */
export const decisionOf = (
  snapshots: Record<string, unknown>,
  step: string,
  pending: ReadonlyArray<PendingDecision>
): "approved" | "rejected" | undefined => {
  const snapshot = Object.prototype.hasOwnProperty.call(snapshots, step) ? snapshots[step] : undefined
  const taken = (snapshot as { decision?: unknown } | null | undefined)?.decision
  if (taken === "approved" || taken === "rejected") return taken
  const first = pending.find((p) => p.expectedStep === step && isDecision(p.name))
  return first === undefined ? undefined : DECISIONS[first.name]
}

/**
 * What to do with a step-bound signal (approve, reject, file_submitted, a row action) when it
 * is sent, before anything is recorded. Unnamed (no `expectedStep`), it binds to the step
 * current now, as it always did. Named:
 * - the decision already taken on that step, again: `duplicate` (a no-op that succeeds);
 * - a step decided the other way, or one that is not (or no longer) current: `conflict`,
 *   naming the current step;
 * - the current step, undecided: `record`, bound to it (delivery then ignores it if, by then,
 *   another signal moved the task on: see applyToTask).
 */
export type Acceptance =
  | { readonly _tag: "record"; readonly expectedStep: string | null }
  | { readonly _tag: "duplicate" }
  | { readonly _tag: "conflict"; readonly message: string }
  | { readonly _tag: "badRequest"; readonly message: string; readonly currentStatus: string }

const whereIs = (task: { readonly status: string; readonly currentStep: string | null }) =>
  task.currentStep !== null ? `the task is at step "${task.currentStep}"` : `the task is ${task.status} with no current step`

export const acceptSignal = (
  task: { readonly status: string; readonly currentStep: string | null },
  snapshots: Record<string, unknown>,
  signal: { readonly name: string; readonly payload: Record<string, unknown>; readonly expectedStep?: string | undefined },
  pending: ReadonlyArray<PendingDecision>
): Acceptance => {
  const decision = isDecision(signal.name)
  const named = signal.expectedStep
  if (named === undefined) {
    if (decision && (task.currentStep === null || isTerminal(task.status))) {
      return { _tag: "badRequest", message: `Task is ${task.status} with no step to decide`, currentStatus: task.status }
    }
    return { _tag: "record", expectedStep: task.currentStep }
  }
  if (!decision && !STEP_SIGNALS.has(signal.name) && !isRowAction(signal)) return { _tag: "record", expectedStep: named }
  const taken = decisionOf(snapshots, named, pending)
  if (decision && taken === DECISIONS[signal.name]) return { _tag: "duplicate" }
  if (taken !== undefined) {
    return { _tag: "conflict", message: `Step "${named}" was already ${taken}; ${whereIs(task)}` }
  }
  if (named !== task.currentStep) {
    return { _tag: "conflict", message: `Step "${named}" is not the current step: ${whereIs(task)}` }
  }
  return { _tag: "record", expectedStep: named }
}

export interface RowState {
  readonly status: string
  readonly fields: Record<string, Scalar>
}

export interface RowActionPayload {
  readonly ledger: string
  readonly action: string
  readonly rowId: string
  readonly field?: string
  readonly value?: Scalar
}

/**
 * Whether a row action may be taken on this task at all, before the ledger's own rules: the
 * row must belong to the task (another task's row answers like a missing one) and the task's
 * current step must be a table step (a finished task, or one at another kind of step, takes none).
 */
export const rowActionAllowed = (
  task: { readonly id: string; readonly status: string; readonly currentStep: string | null },
  runbook: Workspace.Runbook | null,
  rowTaskId: string | null
):
  | { readonly _tag: "ok" }
  | { readonly _tag: "notFound" }
  | { readonly _tag: "badRequest"; readonly message: string; readonly currentStatus: string } =>
{
  if (rowTaskId !== task.id) return { _tag: "notFound" }
  const step = task.currentStep === null ? undefined : runbook?.steps.find((s) => s.id === task.currentStep)
  if (step === undefined) {
    return { _tag: "badRequest", message: `Task is ${task.status} with no step to act on`, currentStatus: task.status }
  }
  if (step.displayHint.component !== TABLE_STEP) {
    return {
      _tag: "badRequest",
      message: `Current step "${step.id}" (${step.displayHint.component}) is not a ${TABLE_STEP} step: row actions apply to table steps only`,
      currentStatus: task.status
    }
  }
  return { _tag: "ok" }
}

/** The display component of a step whose rows can be acted on. */
export const TABLE_STEP = "TABLE_REVIEW"

export const rowActionOf = (payload: Record<string, unknown>): RowActionPayload => payload as unknown as RowActionPayload

/** A row action, by the same ledger rules as the direct subledger endpoints. */
export const applyToRow = (
  row: RowState,
  action: RowActionPayload
): { readonly _tag: "changed"; readonly row: RowState } | { readonly _tag: "ignored"; readonly reason: string } => {
  if (action.action === "reject_row") {
    const d = decideReject(action.ledger, row.status)
    return d._tag === "ok" ? { _tag: "changed", row: { ...row, status: d.value } } : { _tag: "ignored", reason: reasonOf(d) }
  }
  const field = action.field ?? ""
  const d = decideEdit(action.ledger, row.status, field, action.value ?? null)
  return d._tag === "ok"
    ? { _tag: "changed", row: { ...row, fields: { ...row.fields, [field]: d.value } } }
    : { _tag: "ignored", reason: reasonOf(d) }
}

const reasonOf = (d: { readonly _tag: "notFound" } | { readonly _tag: "badRequest"; readonly message: string }) =>
  d._tag === "notFound" ? "unknown ledger" : d.message

/** The `source` of the task events the engine writes. */
export const ENGINE_EVENT_SOURCE = "workspace"

/** A task event the engine writes when it applies a signal (its seq is allocated by the store). */
export interface EngineEvent {
  readonly type: "source.submitted" | "step.completed" | "task.status_changed"
  readonly payload: Record<string, unknown>
}

const DECISION_OF_SIGNAL: Readonly<Record<string, string>> = { approve: "approve", reject: "reject" }

/**
 * What the timeline says about a signal `applyToTask` applied ("changed"): what was submitted
 * (a document or a data record) with its ids, the step completed with its decision (and the
 * reason or comments given), and the task's status change when there is one. Ignored signals
 * write nothing, so this is called only for applied ones.
 */
export const engineEventsOf = (
  before: { readonly status: string; readonly currentStep: string | null },
  signal: PendingSignal,
  after: { readonly status: string }
): ReadonlyArray<EngineEvent> => {
  const stepId = before.currentStep
  const p = signal.payload
  const out: Array<EngineEvent> = []
  const decision = DECISION_OF_SIGNAL[signal.name] ?? "submitted"
  if (decision === "submitted") {
    if (typeof p.documentRef === "string") {
      out.push({ type: "source.submitted", payload: { stepId, kind: "file", documentIds: [p.documentRef] } })
    } else if (typeof p.rowId === "string") {
      out.push({
        type: "source.submitted",
        payload: { stepId, kind: "data", recordIds: [p.rowId], ...(typeof p.kind === "string" ? { recordKind: p.kind } : {}) }
      })
    }
  }
  out.push({
    type: "step.completed",
    payload: {
      stepId,
      decision,
      ...(p.reason !== undefined && p.reason !== null ? { reason: p.reason } : {}),
      ...(p.comments !== undefined && p.comments !== null ? { comments: p.comments } : {})
    }
  })
  if (after.status !== before.status) {
    out.push({ type: "task.status_changed", payload: { from: before.status, to: after.status } })
  }
  return out
}
