/**
 * The inbox's rules, pure (README "Inbox and assignment"): which steps of which workflows a query
 * selects (so that a store pages with one query over plain columns), and the item a waiting task
 * shows. Every store applies them.
 */
import type { InboxItem } from "../api/inbox.js"
import type { Workspace } from "../upstream/model.js"
import type { InboxQuery } from "../upstream/inbox.js"
import { actorKey, groupNameOf } from "./actorSkeleton.js"
import { actRefusal, assigneesOf, type Caller, type Claim, claimOn, durationMs, isAssignee } from "./assignment.js"

type Step = Workspace.Runbook["steps"][number]

/** A step the query selects, and (for `overdue`) the waitingSince before which it is overdue. */
export interface SelectedStep {
  readonly workflowId: string
  readonly stepId: string
  readonly overdueBefore?: string | undefined
}

/** Whether the step is assigned to `assignee` ("me": the caller; else an actor or group:<name>). */
const assignedTo = (step: Step, assignee: string, caller: Caller): boolean => {
  if (assignee === "me") return isAssignee(step, caller)
  if (groupNameOf(assignee) !== undefined) {
    const key = actorKey(assignee)
    return (step.assignees ?? []).some((a) => actorKey(a) === key)
  }
  return isAssignee(step, { actor: assignee, groups: [], enforced: true })
}

/**
 * The (workflow, step) pairs the query's step filters select (`awaiting`, `assignee`, `overdue`),
 * or undefined when it has none of them (every step). `workflowId` narrows the workflows.
 */
export const selectSteps = (
  workflows: ReadonlyArray<{ readonly id: string; readonly runbook: Workspace.Runbook | null }>,
  query: InboxQuery,
  caller: Caller
): ReadonlyArray<SelectedStep> | undefined => {
  if (query.awaiting === undefined && query.assignee === undefined && query.overdue !== true) return undefined
  const now = Date.parse(query.now)
  const out: Array<SelectedStep> = []
  for (const wf of workflows) {
    if (query.workflowId !== undefined && wf.id !== query.workflowId) continue
    for (const step of wf.runbook?.steps ?? []) {
      if (query.awaiting !== undefined && step.displayHint.component !== query.awaiting) continue
      if (query.assignee !== undefined && !assignedTo(step, query.assignee, caller)) continue
      if (query.overdue === true) {
        const ms = step.dueIn === undefined ? undefined : durationMs(step.dueIn)
        if (ms === undefined || now - ms < -8.64e15) continue
        out.push({ workflowId: wf.id, stepId: step.id, overdueBefore: new Date(now - ms).toISOString() })
      } else out.push({ workflowId: wf.id, stepId: step.id })
    }
  }
  return out
}

/** What a store read for one waiting task. */
export interface WaitingTask {
  readonly task: Workspace.Task
  readonly entityName: string
  readonly waitingSince: string
  readonly claim: Claim | null
}

/** The inbox item of a waiting task at `step` (undefined when its runbook does not name the step). */
export const inboxItemOf = (
  waiting: WaitingTask,
  runbook: Workspace.Runbook | null,
  caller: Caller,
  now: string
): InboxItem | undefined => {
  const { task } = waiting
  const step = runbook?.steps.find((s) => s.id === task.currentStep)
  if (step === undefined) return undefined
  const ms = step.dueIn === undefined ? undefined : durationMs(step.dueIn)
  const dueMs = ms === undefined ? undefined : Date.parse(waiting.waitingSince) + ms
  const dueAt = dueMs === undefined || !Number.isFinite(dueMs) || Math.abs(dueMs) > 8.64e15 ? undefined : new Date(dueMs).toISOString()
  const claim = claimOn(waiting.claim, step.id)
  return {
    task: {
      id: task.id,
      title: task.title,
      status: task.status as InboxItem["task"]["status"],
      priority: task.priority,
      awaiting: step.displayHint.component,
      entityId: task.entityId,
      workflowId: task.workflowId,
      createdAt: task.createdAt
    },
    entity: { id: task.entityId, name: waiting.entityName },
    step: { id: step.id, title: step.title, component: step.displayHint.component },
    waitingSince: waiting.waitingSince,
    ...(dueAt !== undefined ? { dueAt } : {}),
    overdue: dueAt !== undefined && dueAt < now,
    assignees: assigneesOf(step),
    ...(step.agentId !== undefined ? { agentId: step.agentId } : {}),
    requireClaim: step.requireClaim === true,
    ...(claim !== undefined ? { claim: { stepId: claim.stepId, by: claim.by, at: claim.at, override: claim.override } } : {}),
    mayAct: actRefusal(step, caller, claim) === undefined
  }
}
