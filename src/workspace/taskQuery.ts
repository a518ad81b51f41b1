/**
 * What a TaskQuery (src/services/WorkspaceClient.ts) selects, once for every store: the memory
 * store applies it to its list, the SQL store turns the same rules into a WHERE clause.
 */
import type { TaskQuery } from "../upstream/WorkspaceClient.js"
import type { Workspace } from "../upstream/model.js"

/** The message of an `afterId` that is not a task of the listed entity. */
export const unknownAfterId = (afterId: string) => `cursor: task ${afterId} is not in this list`

/** The key a step is matched by (workflow ids and step ids may hold any character, so JSON). */
export const stepKey = (workflowId: string, stepId: string) => JSON.stringify([workflowId, stepId])

/** The tasks of `tasks` (one entity's, in list order) that `query` selects; a string when `afterId` is unknown. */
export const selectTasks = (tasks: ReadonlyArray<Workspace.Task>, query: TaskQuery): ReadonlyArray<Workspace.Task> | string => {
  let from = 0
  if (query.afterId !== undefined) {
    const at = tasks.findIndex((t) => t.id === query.afterId)
    if (at === -1) return unknownAfterId(query.afterId)
    from = at + 1
  }
  const steps = query.currentSteps === undefined ? undefined : new Set(query.currentSteps.map((s) => stepKey(s.workflowId, s.stepId)))
  const out: Array<Workspace.Task> = []
  for (let i = from; i < tasks.length && (query.limit === undefined || out.length < query.limit); i++) {
    const t = tasks[i]!
    if (query.status !== undefined && t.status !== query.status) continue
    if (steps !== undefined && (t.currentStep === null || !steps.has(stepKey(t.workflowId, t.currentStep)))) continue
    out.push(t)
  }
  return out
}
