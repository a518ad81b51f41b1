/**
 * An entity's task board (its tasks, each with `awaiting`) over any WorkspaceClient: the port's
 * own `listTaskBoard` where the implementation has one (one upstream round trip), else composed
 * from getEntity and listTasks (at once: neither needs the other) and one getNextSteps for the
 * tasks still running.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type { TaskQuery, WorkspaceClientService } from "./WorkspaceClient.js"
import type { Workspace } from "./model.js"
import { isTerminalStatus } from "../api/taskListing.js"

/**
 * The board from the port's separate calls. The entity is asked beside the list, and its
 * failure wins (a missing entity answers NotFound whatever the query). `awaiting`: from the
 * tasks' next steps in one call; a task whose lookup fails has none, and when the whole call
 * fails no task has one and the board still answers.
 */
export const composeTaskBoard = (workspace: WorkspaceClientService) =>
(tenantId: string, entityId: string, query?: TaskQuery) =>
  Effect.gen(function*() {
    const [entity, listed] = yield* Effect.all([
      Effect.result(workspace.getEntity(tenantId, entityId)),
      Effect.result(workspace.listTasks(tenantId, entityId, query))
    ], { concurrency: 2 })
    if (Result.isFailure(entity)) return yield* Effect.fail(entity.failure)
    if (Result.isFailure(listed)) return yield* Effect.fail(listed.failure)
    return yield* withAwaiting(workspace, tenantId, listed.success)
  })

/** The tasks with `awaiting` from one getNextSteps of the running ones. */
export const withAwaiting = (
  workspace: WorkspaceClientService,
  tenantId: string,
  tasks: ReadonlyArray<Workspace.Task>
): Effect.Effect<ReadonlyArray<Workspace.BoardTask>> =>
  Effect.gen(function*() {
    const open: Array<string> = []
    for (const task of tasks) if (!isTerminalStatus(task.status)) open.push(task.id)
    if (open.length === 0) return tasks
    const answers = yield* workspace.getNextSteps(tenantId, open).pipe(Effect.orElseSucceed(() => []))
    const awaiting = new Map<string, string>()
    for (const { nextStep, taskId } of answers) {
      if (nextStep?.step != null) awaiting.set(taskId, nextStep.step.displayHint.component)
    }
    return tasks.map((task): Workspace.BoardTask => {
      const component = isTerminalStatus(task.status) ? undefined : awaiting.get(task.id)
      return component === undefined ? task : { ...task, awaiting: component }
    })
  })

/** The board of `workspace`: its own listTaskBoard, else composed. */
export const taskBoard = (workspace: WorkspaceClientService) => workspace.listTaskBoard ?? composeTaskBoard(workspace)

/**
 * The board as the WorkspaceApi answers it, written without the HttpApi's Schema encode of
 * `Array(BoardTask)`: for these types the encode is the identity on the fields (strings checked
 * against patterns; `awaiting` left out when undefined), so it only re-checked the store's own
 * output and made garbage (about a fifth of the workspace service's CPU per board). Each task is
 * written as the encode writes it: the schema's fields in its order, nothing else.
 * test/workspace/boardJson.test.ts checks the bytes against the schema's encode.
 */
export const boardJson = (tasks: ReadonlyArray<Workspace.BoardTask>): string =>
  JSON.stringify(tasks.map((t) => {
    const wire = {
      id: t.id,
      tenantId: t.tenantId,
      entityId: t.entityId,
      workflowId: t.workflowId,
      title: t.title,
      status: t.status,
      priority: t.priority,
      createdAt: t.createdAt,
      currentStep: t.currentStep
    }
    return t.awaiting === undefined ? wire : { ...wire, awaiting: t.awaiting }
  }))
