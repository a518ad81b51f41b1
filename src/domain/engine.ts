/**
 * The runbook engine's decisions, pure: what one delivered signal does to a task or a row.
 * Both workspaces apply them: the embedded store loads the state, calls these and writes
 * the result in the transaction that marks the signal delivered.
 *
 * A signal that no longer applies (the task moved on, the row changed status) is consumed
 * with an `ignored: ...` outcome rather than retried: retrying cannot change a rule's answer.
 */
import { BadRequest, Conflict, Forbidden } from "../api/errors.js"
import type { Scalar } from "../api/resources.js"
import { decideEdit, decideReject, decideResolve } from "./ledgers.js"
import type { Workspace } from "../upstream/model.js"
import { isTerminalStatus } from "../api/taskListing.js"
import { FILE_SUBMITTED_SIGNAL, ROW_ACTION_SIGNAL } from "../api/stepSignals.js"
import { completeCurrentStep, TABLE_COMPONENT } from "./runbook.js"
import { actRefusal, type Claim, claimOn, dueAtOf } from "./assignment.js"
import { actorKey, isAgentActor, samePerson } from "./actorSkeleton.js"
import { parseJson } from "../api/jsonParse.js"
import { sameJsonValue } from "../lib/sameJson.js"

export interface PendingSignal {
  readonly name: string
  readonly payload: Record<string, unknown>
  /** The step that was current when the signal was accepted; null when it was not step-bound. */
  readonly expectedStep: string | null
  /** Who sent it (the edge's actor or `agent:<uuid>`), when known: recorded in the snapshot and timeline. */
  readonly actor?: string | null | undefined
  /** The request that sent it, for the timeline. */
  readonly requestId?: string | null | undefined
}

/** When each step of a task became current, oldest first (a null step: the task ended). */
export interface StepEntry {
  readonly step: string | null
  /** Wall-clock ms with sub-ms precision (src/lib/preciseClock.ts). */
  readonly since: number
}
export type StepHistory = ReadonlyArray<StepEntry>

/** A new task's history: its first step, current from its creation. */
export const historyStart = (step: string | null, at: number): StepHistory => [{ step, since: at }]

/**
 * The history after the task moved from step `from` to `step` at `at` (unchanged when it did not
 * move). A task with no history (seeded, or recorded before histories were kept) gets `from` as its
 * first entry, current since ever: otherwise the move would be its only entry, and a decision that
 * arrived before the move would be read as one on the step after (two decisions written together
 * on a seeded task both answered 200 and moved it two steps).
 */
export const advanceHistory = (history: StepHistory, from: string | null, step: string | null, at: number): StepHistory => {
  const last = history[history.length - 1]
  if (last === undefined) return from === step ? history : [{ step: from, since: 0 }, { step, since: at }]
  return last.step === step ? history : [...history, { step, since: at }]
}

/**
 * The step that was current at `at`: the last one that became current at or before it. A task
 * with no history (recorded before histories were kept) answers its current step.
 */
export const stepAt = (history: StepHistory, currentStep: string | null, at: number): string | null => {
  let found: StepEntry | undefined
  for (const e of history) {
    if (e.since <= at) found = e
    else break
  }
  return found === undefined ? (history[0]?.step ?? currentStep) : found.step
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
  s.name === ROW_ACTION_SIGNAL && s.payload.kind === "row_action"

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
        [task.currentStep]: {
          decision: approved ? "approved" : "rejected",
          reason: signal.payload.reason ?? null,
          decidedAt: now,
          ...(signal.actor != null ? { decidedBy: signal.actor } : {}),
          ...viaOf(signal.payload)
        }
      }
    }
  }
  // file_submitted completes a FILE_UPLOAD step only; on any other step it is just recorded.
  if (step?.displayHint.component !== "FILE_UPLOAD") return ignored(`current step "${task.currentStep}" is not a FILE_UPLOAD step`)
  return {
    _tag: "changed",
    ...completeCurrentStep(task, runbook),
    snapshots: {
      ...snapshots,
      [task.currentStep]: { ...signal.payload, submittedAt: now, ...(signal.actor != null ? { submittedBy: signal.actor } : {}) }
    }
  }
}

/** A decision made through a decision link says so (`via: "link"`); other ways add nothing. */
const viaOf = (payload: Record<string, unknown>) => (payload.via === "link" ? { via: "link" as const } : {})

/**
 * A step signal recorded but not yet applied (the embedded store's outbox): a decision, or a file
 * submitted to an upload step; either already decides its step.
 */
export interface PendingStepSignal {
  readonly name: string
  readonly expectedStep: string | null
  /** Who sent it and when it was recorded, and whether through a decision link: what a link's decision that it beat is told. */
  readonly actor?: string | null | undefined
  readonly recordedAt?: string | undefined
  readonly via?: "link" | undefined
}

const DECISIONS: Readonly<Record<string, "approved" | "rejected">> = { approve: "approved", reject: "rejected" }

export const isDecision = (name: string) => name === "approve" || name === "reject"

/** How `step` was decided: by an applied decision (its snapshot) or one still pending; undefined if it was not. */
export const decisionOf = (
  snapshots: Record<string, unknown>,
  step: string,
  pending: ReadonlyArray<PendingStepSignal>
): "approved" | "rejected" | undefined => {
  const snapshot = Object.prototype.hasOwnProperty.call(snapshots, step) ? snapshots[step] : undefined
  const taken = (snapshot as { decision?: unknown } | null | undefined)?.decision
  if (taken === "approved" || taken === "rejected") return taken
  const first = pending.find((p) => p.expectedStep === step && isDecision(p.name))
  return first === undefined ? undefined : DECISIONS[first.name]
}

/** Who took the decision on `step`, when, and whether through a link: its snapshot, else the pending decision. */
const decisionRecordOf = (
  snapshots: Record<string, unknown>,
  step: string,
  pending: ReadonlyArray<PendingStepSignal>
): { readonly by?: string | undefined; readonly at?: string | undefined; readonly viaLink: boolean } => {
  const snapshot = Object.prototype.hasOwnProperty.call(snapshots, step) ? snapshots[step] : undefined
  const s = snapshot as { decision?: unknown; decidedAt?: unknown; via?: unknown } | null | undefined
  if (s?.decision === "approved" || s?.decision === "rejected") {
    return { by: deciderOf(snapshot), at: typeof s.decidedAt === "string" ? s.decidedAt : undefined, viaLink: s.via === "link" }
  }
  const first = pending.find((p) => p.expectedStep === step && isDecision(p.name))
  return { by: first?.actor ?? undefined, at: first?.recordedAt, viaLink: first?.via === "link" }
}

/**
 * What to do with a step-bound signal (approve, reject, file_submitted, a row action) when it
 * is sent, before anything is recorded, inside the transaction that records it.
 *
 * Its step: the one the client names (`expectedStep`), else the one that was current when the
 * request ARRIVED (`arrivedAt`, against the task's step history), else the one current now. So a
 * double-click, or two clients deciding at once, cannot decide the step after the one they saw,
 * whatever order the process, the database or the replicas then handle them in. Then:
 * - the decision already taken on that step, again (or, bound by arrival, a file on a step a
 *   file completed): `duplicate` (a no-op that succeeds);
 * - a step decided the other way, or one that is not (or no longer) current: `conflict`,
 *   naming the current step;
 * - a step that requires a decider distinct from earlier steps' (`requireDistinctDecider`),
 *   decided by one of them or by nobody named: `forbidden`;
 * - the current step, undecided: `record`, bound to it (delivery then ignores it if, by then,
 *   another signal moved the task on: see applyToTask).
 */
export type Acceptance =
  | { readonly _tag: "record"; readonly expectedStep: string | null }
  | { readonly _tag: "duplicate" }
  | { readonly _tag: "conflict"; readonly message: string }
  | { readonly _tag: "forbidden"; readonly message: string }
  | { readonly _tag: "badRequest"; readonly message: string; readonly currentStatus: string }

const whereIs = (task: { readonly status: string; readonly currentStep: string | null }) =>
  task.currentStep !== null ? `the task is at step "${task.currentStep}"` : `the task is ${task.status} with no current step`

/** The error a refused acceptance answers with (every store the same); undefined when it is not refused. */
export const refusalOf = (accepted: Acceptance): Conflict | Forbidden | BadRequest | undefined => {
  switch (accepted._tag) {
    case "conflict":
      return new Conflict({ message: accepted.message })
    case "forbidden":
      return new Forbidden({ message: accepted.message })
    case "badRequest":
      return new BadRequest({ message: accepted.message, currentStatus: accepted.currentStatus })
    default:
      return undefined
  }
}

/** What the signal's request knew: when it arrived, who sent it, and the task's history. */
export interface Arrival {
  readonly arrivedAt?: number | undefined
  readonly actor?: string | undefined
  /** The edge's groups of the actor, and whether step assignment holds (src/domain/assignment.ts). */
  readonly groups?: ReadonlyArray<string> | undefined
  readonly enforced?: boolean | undefined
  /** The task's claim, if any (it counts only on the step it names). */
  readonly claim?: Claim | null | undefined
  readonly history?: StepHistory | undefined
  readonly runbook?: Workspace.Runbook | null | undefined
}

/** Whether the step was completed by a file submission (its snapshot says when). */
const submittedOn = (snapshots: Record<string, unknown>, step: string) => {
  const snapshot = Object.prototype.hasOwnProperty.call(snapshots, step) ? snapshots[step] : undefined
  return typeof (snapshot as { submittedAt?: unknown } | null | undefined)?.submittedAt === "string"
}

/**
 * Whether a file completes (or completed) the step: applied (its snapshot), or still in the
 * outbox on an upload step, which its sender's write delivers before it answers. A file signal
 * on any other step is only recorded (applyToTask), so it decides nothing.
 */
const fileCompletes = (
  snapshots: Record<string, unknown>,
  step: string,
  pending: ReadonlyArray<PendingStepSignal>,
  runbook: Workspace.Runbook | null | undefined
) =>
  submittedOn(snapshots, step) ||
  (pending.some((p) => p.name === FILE_SUBMITTED_SIGNAL && p.expectedStep === step) &&
    runbook?.steps.find((s) => s.id === step)?.displayHint.component === "FILE_UPLOAD")

/** Who decided or submitted each step, from its snapshot. */
export const deciderOf = (snapshot: unknown): string | undefined => {
  const s = snapshot as { decidedBy?: unknown; submittedBy?: unknown } | null | undefined
  const who = s?.decidedBy ?? s?.submittedBy
  return typeof who === "string" ? who : undefined
}

/** When each step was decided or submitted, from its snapshot (the time beside deciderOf's who). */
export const completedAtOf = (snapshot: unknown): string | undefined => {
  const s = snapshot as { decidedAt?: unknown; submittedAt?: unknown } | null | undefined
  const at = s?.decidedAt ?? s?.submittedAt
  return typeof at === "string" ? at : undefined
}

/**
 * One person however their name is spelt, for a decision link's person (src/domain/actorSkeleton.ts
 * `actorKey`: compatibility form and case folded; look-alikes stay apart, so a link is never
 * granted to someone else).
 */
export const personKey = actorKey

/**
 * Four-eyes (a runbook step's `requireDistinctDecider`): the step's decider must be a person named
 * by the edge (an agent never is) and must not have decided or submitted an earlier step of the
 * task, compared after one normalization (src/domain/actorSkeleton.ts `samePerson`: compatibility
 * form, case, invisible characters and look-alikes folded away). Undefined when allowed.
 */
export const distinctDeciderRefusal = (
  runbook: Workspace.Runbook | null | undefined,
  step: string,
  snapshots: Record<string, unknown>,
  actor: string | undefined
): string | undefined => {
  const steps = runbook?.steps ?? []
  const at = steps.findIndex((s) => s.id === step)
  if (at < 0 || steps[at]!.requireDistinctDecider !== true) return undefined
  if (actor === undefined) {
    return `Step "${step}" requires a named decider distinct from earlier steps' (four-eyes), and this request names nobody`
  }
  if (isAgentActor(actor)) {
    return `Step "${step}" requires a person named by the edge, distinct from earlier steps' deciders (four-eyes): an agent cannot decide it`
  }
  for (const earlier of steps.slice(0, at)) {
    const snapshot = Object.prototype.hasOwnProperty.call(snapshots, earlier.id) ? snapshots[earlier.id] : undefined
    const decider = deciderOf(snapshot)
    if (decider !== undefined && samePerson(decider, actor)) {
      return `Step "${step}" requires a decider other than the one of step "${earlier.id}" (four-eyes): ${decider} decided it`
    }
  }
  return undefined
}

/**
 * Where a decision `taken` on step `named` leaves the task: where it is, unless the decision is
 * still in the outbox (the task still at `named`), then where the decision takes it.
 */
const afterDecision = (
  task: { readonly status: string; readonly currentStep: string | null },
  named: string,
  taken: string,
  runbook: Workspace.Runbook | null | undefined
) =>
  named !== task.currentStep
    ? task
    : taken === "rejected"
    ? { status: "FAILED", currentStep: null }
    : runbook != null
    ? completeCurrentStep(task, runbook)
    : task

export const acceptSignal = (
  task: { readonly status: string; readonly currentStep: string | null },
  snapshots: Record<string, unknown>,
  signal: {
    readonly name: string
    readonly payload: Record<string, unknown>
    readonly expectedStep?: string | undefined
    /** A decision that claims the step first (Workspace.Signal's, a decision link's). */
    readonly claimFirst?: boolean | undefined
  },
  pending: ReadonlyArray<PendingStepSignal>,
  arrival: Arrival = {}
): Acceptance => {
  const decision = isDecision(signal.name)
  const stepBound = decision || STEP_SIGNALS.has(signal.name) || isRowAction(signal)
  // The step the request saw: named, else current at its arrival, else current now.
  const atArrival = signal.expectedStep === undefined && stepBound && arrival.arrivedAt !== undefined &&
      arrival.history !== undefined && arrival.history.length > 0
    ? stepAt(arrival.history, task.currentStep, arrival.arrivedAt)
    : undefined
  // A step-bound signal always binds to a step, so that a decision already recorded on it (still in
  // the outbox, or applied) is seen: a second one is a duplicate or a conflict, never a second record.
  const named = signal.expectedStep ?? (stepBound ? (atArrival ?? task.currentStep) ?? undefined : undefined)
  if (named === undefined) {
    // A decision, or a file asked to complete a step, on a task that has none left: refused
    // (nothing stored), not acknowledged as signaled and then dropped at delivery.
    const file = signal.name === FILE_SUBMITTED_SIGNAL
    if ((decision || file) && (task.currentStep === null || isTerminalStatus(task.status))) {
      const what = file ? "for a submitted file to complete" : "to decide"
      return { _tag: "badRequest", message: `Task is ${task.status} with no step ${what}`, currentStatus: task.status }
    }
    return { _tag: "record", expectedStep: task.currentStep }
  }
  if (!stepBound) return { _tag: "record", expectedStep: named }
  const taken = decisionOf(snapshots, named, pending)
  if (decision && taken === DECISIONS[signal.name] && signal.payload.via === "link") {
    // A link's decision answers as the link's person, with their comments: it is theirs only if
    // it was recorded through a link by them (a retry). One that another person's (or their own
    // direct) decision beat is told who decided and when, never 2xx for a record not theirs.
    const record = decisionRecordOf(snapshots, named, pending)
    const theirs = record.viaLink && record.by !== undefined && arrival.actor !== undefined && actorKey(record.by) === actorKey(arrival.actor)
    if (!theirs) {
      const by = record.by === undefined ? "" : ` by ${record.by}`
      const at = record.at === undefined ? "" : ` at ${record.at}`
      return { _tag: "conflict", message: `Step "${named}" was already ${taken}${by}${at}; ${whereIs(afterDecision(task, named, taken, arrival.runbook))}` }
    }
  }
  if (decision && taken === DECISIONS[signal.name]) {
    // One decision however often it is sent, but only for someone who could have taken it: its
    // decider again, or another who passes the step's rules (two assignees at once). Anyone else
    // hearing 2xx would be told their decision counted (a decision link's page says "approved").
    const decider = deciderOf(Object.prototype.hasOwnProperty.call(snapshots, named) ? snapshots[named] : undefined)
    const again = decider !== undefined && arrival.actor !== undefined && actorKey(decider) === actorKey(arrival.actor)
    const refused = again ? undefined : actorRefusal(named, signal.name, snapshots, arrival)
    if (refused !== undefined && signal.claimFirst === true && !again) {
      // A decision that claims first (a decision link's) would have taken the claim had the step
      // been free; it was not: the one who decided held it. Judged as if this caller held the
      // claim, the step's other rules (assignment, four-eyes) still refuse with their 403; the
      // claim alone is a 409 naming the decision, as a claim another holds is (assignment.ts
      // claimFirst), not "must be claimed", which the link's person cannot do from a message.
      const asHolder = actorRefusal(named, signal.name, snapshots, {
        ...arrival,
        claim: arrival.actor === undefined ? arrival.claim : { stepId: named, by: arrival.actor, at: "", override: false }
      })
      return asHolder !== undefined
        ? { _tag: "forbidden", message: asHolder }
        : { _tag: "conflict", message: `Step "${named}" was already ${taken}${decider === undefined ? "" : ` by ${decider}`}, who held its claim; ${whereIs(afterDecision(task, named, taken, arrival.runbook))}` }
    }
    return refused !== undefined ? { _tag: "forbidden", message: refused } : { _tag: "duplicate" }
  }
  // Two files sent together to one upload step (bound by arrival): the step completes once, both
  // files are kept. A file naming a step that is done (an agent's stale submit) is a conflict.
  const filed = taken === undefined && fileCompletes(snapshots, named, pending, arrival.runbook)
  if (signal.name === FILE_SUBMITTED_SIGNAL && signal.expectedStep === undefined && filed) {
    return { _tag: "duplicate" }
  }
  if (filed) {
    // Anything else on a step a file completes (a decision written together with the file, a
    // file naming the step): a 409, never a record that delivery would then drop after a 2xx.
    const after = named === task.currentStep && arrival.runbook != null ? completeCurrentStep(task, arrival.runbook) : task
    return { _tag: "conflict", message: `Step "${named}" was already completed by a submitted file; ${whereIs(after)}` }
  }
  if (taken !== undefined) {
    // Decided on the step the task is still at: by a decision still in the outbox, which its
    // sender's write delivers before it answers. Named is where that decision takes the task, not
    // the step it leaves (a commit's sync off the event loop lets a competing decision be judged
    // in between). Who decided, when someone was named (a link's person who lost to another's
    // opposite decision learns who took it, as the link's page then says).
    const by = decisionRecordOf(snapshots, named, pending).by
    return {
      _tag: "conflict",
      message: `Step "${named}" was already ${taken}${by === undefined ? "" : ` by ${by}`}; ${whereIs(afterDecision(task, named, taken, arrival.runbook))}`
    }
  }
  if (named !== task.currentStep) {
    return { _tag: "conflict", message: `Step "${named}" is not the current step: ${whereIs(task)}` }
  }
  const refused = actorRefusal(named, signal.name, snapshots, arrival)
  if (refused !== undefined) return { _tag: "forbidden", message: refused }
  return { _tag: "record", expectedStep: named }
}

/** Why the request's actor may not act on step `named`: assignment and claims, then four-eyes; undefined when they may. */
const actorRefusal = (
  named: string,
  signalName: string,
  snapshots: Record<string, unknown>,
  arrival: Arrival
): string | undefined => {
  // Assignment (src/domain/assignment.ts): decisions, row actions and file signals alike.
  const step = arrival.runbook?.steps.find((s) => s.id === named)
  if (step !== undefined) {
    const refused = actRefusal(
      step,
      { actor: arrival.actor, groups: arrival.groups ?? [], enforced: arrival.enforced === true },
      claimOn(arrival.claim, named)
    )
    if (refused !== undefined) return refused
  }
  return signalName !== ROW_ACTION_SIGNAL ? distinctDeciderRefusal(arrival.runbook, named, snapshots, arrival.actor) : undefined
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
  /** edit_cell: the value the editor saw (absent: not checked). */
  readonly expected?: Scalar
}

/**
 * "No silent overwrite": whether an edit that says which value its editor saw (`expected`) meets
 * another one now. Values compare as JSON scalars (the stored, coerced value is what readers saw).
 */
export const cellMoved = (current: Scalar | undefined, expected: { readonly expected?: Scalar }): boolean =>
  "expected" in expected && expected.expected !== undefined && (current ?? null) !== expected.expected

/** Who changed `field` of row `rowId` last, from a task's timeline (newest first); null when it does not say. */
export const lastEditorOf = (
  newestFirst: Iterable<{ readonly type: string; readonly payload: unknown }>,
  rowId: string,
  field: string
): string | null => {
  for (const e of newestFirst) {
    if (e.type !== "row.edited") continue
    const p = (typeof e.payload === "string" ? JSON.parse(e.payload) : e.payload) as { rowId?: unknown; field?: unknown; actor?: unknown }
    if (p.rowId === rowId && p.field === field) return typeof p.actor === "string" ? p.actor : null
  }
  return null
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
  if (step.displayHint.component !== TABLE_COMPONENT) {
    return {
      _tag: "badRequest",
      message: `Current step "${step.id}" (${step.displayHint.component}) is not a ${TABLE_COMPONENT} step: row actions apply to table steps only`,
      currentStatus: task.status
    }
  }
  return { _tag: "ok" }
}

export const rowActionOf = (payload: Record<string, unknown>): RowActionPayload => payload as unknown as RowActionPayload

/** A row action, by the same ledger rules as the direct subledger endpoints. */
export const applyToRow = (
  row: RowState,
  action: RowActionPayload
): { readonly _tag: "changed"; readonly row: RowState } | { readonly _tag: "ignored"; readonly reason: string } => {
  if (action.action === "reject_row" || action.action === "resolve_flag") {
    const d = (action.action === "reject_row" ? decideReject : decideResolve)(action.ledger, row.status)
    return d._tag === "ok" ? { _tag: "changed", row: { ...row, status: d.value } } : { _tag: "ignored", reason: reasonOf(d) }
  }
  const field = action.field ?? ""
  if (cellMoved(row.fields[field], action)) return { _tag: "ignored", reason: `field "${field}" changed since the editor saw it` }
  const d = decideEdit(action.ledger, row.status, field, action.value ?? null)
  return d._tag === "ok"
    ? { _tag: "changed", row: { ...row, fields: { ...row.fields, [field]: d.value } } }
    : { _tag: "ignored", reason: reasonOf(d) }
}

const reasonOf = (d: { readonly _tag: "notFound" } | { readonly _tag: "badRequest"; readonly message: string }) =>
  d._tag === "notFound" ? "unknown ledger" : d.message

/** The `source` of the task events the engine writes. */
export const ENGINE_EVENT_SOURCE = "workspace"

/** The `source` of the audit events a write through the gateway appends (who did what, when). */
export const AUDIT_EVENT_SOURCE = "audit"

/** A task event the engine or a write appends (its seq is allocated by the store). */
export interface EngineEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
  /** Defaults to ENGINE_EVENT_SOURCE. */
  readonly source?: string
}

const DECISION_OF_SIGNAL: Readonly<Record<string, string>> = { approve: "approve", reject: "reject" }

/** Who and which request, as every audit payload carries them (null when unknown). */
export interface Attribution {
  readonly actor?: string | null | undefined
  readonly requestId?: string | null | undefined
}
const by = (who: Attribution) => ({ actor: who.actor ?? null, requestId: who.requestId ?? null })

/**
 * What the timeline says about a signal `applyToTask` applied ("changed"): what was submitted
 * (a document or a data record) with its ids, the step completed with its decision (and the
 * reason or comments given) and who decided it, and the task's status change when there is
 * one. Ignored signals write nothing, so this is called only for applied ones.
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
      ...(p.comments !== undefined && p.comments !== null ? { comments: p.comments } : {}),
      ...by(signal),
      ...viaOf(p)
    }
  })
  if (after.status !== before.status) {
    out.push({ type: "task.status_changed", payload: { from: before.status, to: after.status } })
  }
  return out
}

/**
 * The audit events of the gateway's writes (README "The audit timeline"): one per state
 * change, appended in the transaction that makes it, with who and which request.
 */
export const audit = {
  taskCreated: (task: Workspace.Task, context: Record<string, unknown>, who: Attribution): EngineEvent => ({
    type: "task.created",
    source: AUDIT_EVENT_SOURCE,
    payload: { workflowId: task.workflowId, title: task.title, firstStep: task.currentStep, context, ...by(who) }
  }),
  rowRejected: (
    row: { readonly ledger: string; readonly id: string },
    previousStatus: string,
    newStatus: string,
    via: "row_action" | "direct",
    who: Attribution,
    stepId: string | null = null
  ): EngineEvent => ({
    type: "row.rejected",
    source: AUDIT_EVENT_SOURCE,
    payload: { ledger: row.ledger, rowId: row.id, previousStatus, newStatus, via, ...(stepId !== null ? { stepId } : {}), ...by(who) }
  }),
  /** A flagged row marked resolved (the `resolve_flag` row action). */
  rowResolved: (
    row: { readonly ledger: string; readonly id: string },
    previousStatus: string,
    newStatus: string,
    who: Attribution,
    stepId: string | null = null
  ): EngineEvent => ({
    type: "row.resolved",
    source: AUDIT_EVENT_SOURCE,
    payload: { ledger: row.ledger, rowId: row.id, previousStatus, newStatus, via: "row_action", ...(stepId !== null ? { stepId } : {}), ...by(who) }
  }),
  cellEdited: (
    row: { readonly ledger: string; readonly id: string },
    field: string,
    oldValue: Scalar | undefined,
    newValue: Scalar,
    via: "row_action" | "direct",
    who: Attribution,
    stepId: string | null = null
  ): EngineEvent => ({
    type: "row.edited",
    source: AUDIT_EVENT_SOURCE,
    payload: {
      ledger: row.ledger,
      rowId: row.id,
      field,
      oldValue: oldValue ?? null,
      newValue,
      via,
      ...(stepId !== null ? { stepId } : {}),
      ...by(who)
    }
  }),
  fileStored: (doc: Workspace.Document, signalName: string | null, who: Attribution): EngineEvent => ({
    type: "file.stored",
    source: AUDIT_EVENT_SOURCE,
    payload: {
      documentId: doc.id,
      source: doc.source,
      fileName: doc.filename,
      contentType: doc.contentType,
      sizeBytes: doc.sizeBytes,
      signal: signalName,
      ...by(who)
    }
  }),
  dataIngested: (taskId: string, kind: string | null, recordIds: ReadonlyArray<string>, signalName: string | null, who: Attribution): EngineEvent => ({
    type: "data.ingested",
    source: AUDIT_EVENT_SOURCE,
    payload: {
      taskId,
      kind,
      count: recordIds.length,
      // The first ids only: a 10,000-row batch is one event, not a 400 KB one.
      recordIds: recordIds.slice(0, AUDIT_MAX_IDS),
      signal: signalName,
      ...by(who)
    }
  })
} as const

/** At most this many record ids are listed in a data.ingested event (its count says how many there were). */
export const AUDIT_MAX_IDS = 20

/** The audit event a delivered row action writes: what changed, from what (null when it was ignored). */
export const rowActionEvent = (
  before: RowState,
  after: RowState,
  action: RowActionPayload,
  signal: PendingSignal
): EngineEvent =>
  action.action === "reject_row"
    ? audit.rowRejected({ ledger: action.ledger, id: action.rowId }, before.status, after.status, "row_action", signal, signal.expectedStep)
    : action.action === "resolve_flag"
    ? audit.rowResolved({ ledger: action.ledger, id: action.rowId }, before.status, after.status, signal, signal.expectedStep)
    : audit.cellEdited(
      { ledger: action.ledger, id: action.rowId },
      action.field ?? "",
      before.fields[action.field ?? ""],
      after.fields[action.field ?? ""] ?? null,
      "row_action",
      signal,
      signal.expectedStep
    )

/** Two task events are the same post (an idempotent re-post) when all but seq and time agree. */
export const sameEvent = (
  a: { readonly type: string; readonly source: string; readonly sourceLabel?: string | null | undefined; readonly groupKey?: string | null | undefined; readonly payload: unknown },
  b: { readonly type: string; readonly source: string; readonly sourceLabel?: string | null | undefined; readonly groupKey?: string | null | undefined; readonly payload: unknown }
) =>
  a.type === b.type && a.source === b.source && (a.sourceLabel ?? null) === (b.sourceLabel ?? null) &&
  (a.groupKey ?? null) === (b.groupKey ?? null) && samePayload(a.payload, b.payload)

/** The same JSON text, or (parsed only then: a retry rarely differs) the same value in another key order. */
const samePayload = (a: unknown, b: unknown): boolean => {
  const ta = typeof a === "string" ? a : JSON.stringify(a)
  const tb = typeof b === "string" ? b : JSON.stringify(b)
  if (ta === tb) return true
  try {
    return sameJsonValue(parseJson(ta), parseJson(tb))
  } catch {
    return false
  }
}

/** A new task of a workflow: titled by its period when the context gives one, at the runbook's first step. */
export const newTask = (
  ids: { readonly id: string; readonly tenantId: string; readonly entityId: string; readonly createdAt: string },
  workflow: { readonly id: string; readonly name: string; readonly runbook: Workspace.Runbook | null },
  context: Record<string, unknown>
): Workspace.Task => ({
  ...ids,
  workflowId: workflow.id,
  title: typeof context.period === "string" ? `${workflow.name} ${context.period}` : workflow.name,
  status: "IN_PROGRESS",
  priority: "HIGH",
  currentStep: workflow.runbook?.steps[0]?.id ?? null
})

/**
 * The event a step writes when it becomes current (the task was created, or a decision moved it
 * on): who it waits for and by when, small (ids and names only). Undefined when there is no such
 * step (the task ended, or the runbook does not name it).
 */
export const waitingEvent = (runbook: Workspace.Runbook | null, stepId: string | null, since: string): EngineEvent | undefined => {
  const step = stepId === null ? undefined : runbook?.steps.find((s) => s.id === stepId)
  if (step === undefined) return undefined
  const dueAt = dueAtOf(step, since)
  return {
    type: "task.waiting",
    payload: {
      stepId: step.id,
      title: step.title,
      component: step.displayHint.component,
      assignees: [...(step.assignees ?? [])],
      ...(dueAt !== undefined ? { dueAt } : {}),
      ...(step.agentId !== undefined ? { agentId: step.agentId } : {})
    }
  }
}

/** The events of a claim taken or released (who, which step, and whether it took over an agent's step). */
export const claimEvent = (
  kind: "claimed" | "released",
  claim: { readonly stepId: string; readonly by: string; readonly override: boolean },
  who: Attribution
): EngineEvent => ({
  type: kind === "claimed" ? "step.claimed" : "step.released",
  source: AUDIT_EVENT_SOURCE,
  payload: { stepId: claim.stepId, holder: claim.by, ...(claim.override ? { override: true } : {}), ...by(who) }
})
