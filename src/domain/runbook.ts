/**
 * Pure runbook rules shared by every workspace implementation: a task's steps, their statuses
 * and its next step (a table step with the rows it reviews), and which step follows the current
 * one. What a signal does to a task is the engine's (./engine.ts). No I/O here.
 */
import { FILE_SUBMITTED_SIGNAL } from "../api/stepSignals.js"
import type { Scalar, UiStep } from "../api/resources.js"
import { ledgerRules } from "./ledgers.js"
import type { Workspace } from "../upstream/model.js"

export const STEP = { COMPLETED: "COMPLETED", CURRENT: "IN_PROGRESS", PENDING: "PENDING", SKIPPED: "SKIPPED" } as const


/** Every step's status: before the current one COMPLETED; all COMPLETED for a COMPLETED task. */
export const stepStatuses = (
  task: Pick<Workspace.Task, "status" | "currentStep">,
  runbook: Workspace.Runbook,
  snapshots: Record<string, unknown>
): ReadonlyArray<{ id: string; title: string; status: string }> => {
  if (task.status === "COMPLETED") return runbook.steps.map((s) => ({ id: s.id, title: s.title, status: STEP.COMPLETED }))
  if (task.currentStep === null) {
    // FAILED (or stopped) tasks: what was decided stays COMPLETED, the rest never ran.
    return runbook.steps.map((s) => ({ id: s.id, title: s.title, status: s.id in snapshots ? STEP.COMPLETED : STEP.SKIPPED }))
  }
  const current = runbook.steps.findIndex((s) => s.id === task.currentStep)
  return runbook.steps.map((s, i) => ({
    id: s.id,
    title: s.title,
    status: i < current ? STEP.COMPLETED : i === current ? STEP.CURRENT : STEP.PENDING
  }))
}

/** The submit_file action a FILE_UPLOAD step advertises to agents and UIs. */
export const submitFileAction = (taskId: string, args: Record<string, unknown>) => ({
  type: "submit_file",
  method: "POST",
  path: `/v1/tasks/${taskId}/files/ingest`,
  // Absent, not undefined: a JSON value has no undefined (Effect 4's Json schema refuses it).
  ...(typeof args.source === "string" ? { source: args.source } : {}),
  signalTaskId: taskId,
  signalName: FILE_SUBMITTED_SIGNAL
})

/** The task's current step as the UI shows it, or null when it has none. */
export const currentStep = (task: Pick<Workspace.Task, "id" | "currentStep">, runbook: Workspace.Runbook): UiStep | null => {
  const step = runbook.steps.find((s) => s.id === task.currentStep)
  if (step === undefined) return null
  const args = step.displayHint.component === "FILE_UPLOAD"
    ? { ...step.args, actions: [submitFileAction(task.id, step.args)] }
    : step.args
  return { id: step.id, title: step.title, displayHint: step.displayHint, args }
}

export const nextStepOf = (
  task: Workspace.Task,
  runbook: Workspace.Runbook,
  snapshots: Record<string, unknown>
): Workspace.NextStep => ({ step: currentStep(task, runbook), steps: stepStatuses(task, runbook, snapshots) })

/** The task after its current step completes with this snapshot: the next step, or COMPLETED. */
export const completeCurrentStep = (
  task: Pick<Workspace.Task, "currentStep">,
  runbook: Workspace.Runbook
): Pick<Workspace.Task, "status" | "currentStep"> => {
  const i = runbook.steps.findIndex((s) => s.id === task.currentStep)
  const next = runbook.steps[i + 1]
  return next === undefined ? { status: "COMPLETED", currentStep: null } : { status: "IN_PROGRESS", currentStep: next.id }
}


/** A row of a table step, as its next-step `args.rows` carry it. */
export interface TableRow {
  readonly id: string
  readonly status: string
  readonly fields: Record<string, Scalar>
  /** The fields a reviewer may edit now (none when the row's status allows no edit). */
  readonly editable: ReadonlyArray<string>
}

/** The ledger a table step reviews (its displayHint.config.ledger); undefined when it names none. */
export const tableLedgerOf = (step: UiStep): string | undefined => {
  const ledger = step.displayHint.config.ledger
  return step.displayHint.component === TABLE_COMPONENT && typeof ledger === "string" ? ledger : undefined
}

/** The display component of a table step: its next-step args carry the rows it reviews, and only its rows can be acted on. */
export const TABLE_COMPONENT = "TABLE_REVIEW"

export const tableRowOf = (ledger: string, row: { readonly id: string; readonly status: string; readonly fields: Record<string, Scalar> }): TableRow => {
  const rules = ledgerRules(ledger)
  return {
    id: row.id,
    status: row.status,
    fields: row.fields,
    editable: rules !== undefined && rules.editableIn.includes(row.status) ? Object.keys(rules.editable) : []
  }
}

/** The next step with the task's rows in a table step's args (`args.rows`); other steps unchanged. */
export const withTableRows = (next: Workspace.NextStep, rows: ReadonlyArray<TableRow>): Workspace.NextStep =>
  next.step === null || next.step.displayHint.component !== TABLE_COMPONENT
    ? next
    : { ...next, step: { ...next.step, args: { ...next.step.args, rows } } }
