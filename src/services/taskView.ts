import type { Workspace } from "../upstream/WorkspaceClient.js"

/** A task as the gateway shows it: the TaskSummary fields, without tenant or runbook position. */
export const taskView = (task: Workspace.Task) => ({
  id: task.id,
  title: task.title,
  status: task.status,
  priority: task.priority,
  entityId: task.entityId,
  workflowId: task.workflowId,
  createdAt: task.createdAt
})
