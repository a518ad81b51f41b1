/**
 * The entity operations of spec §4 ("Entities"), shared by the HTTP handlers
 * (src/handlers/entities.ts) and the agent tool server (src/mcp/tools.ts): one place for each
 * rule (tenant scoping, `awaiting`, startParams, the workflow check before a start).
 */
import * as Effect from "effect/Effect"
import type { CreateTaskDto } from "../api/dtos.js"
import { BadRequest, NotFound, type UpstreamError } from "../api/errors.js"
import type { TaskSummary, WorkflowEntry } from "../api/resources.js"
import { CURSOR_MESSAGE, encodeTaskCursor, type TaskListQuery, taskIdOfCursor } from "../api/taskListing.js"
import { taskView } from "./taskView.js"
import { testWithin } from "../lib/boundedRegExp.js"
import { checkContext, startParamsOf } from "./startParams.js"
import { Tenant } from "./Tenant.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { isTerminalStatus } from "../api/taskListing.js"
import { taskBoard } from "../upstream/taskBoard.js"
import { type Workspace, WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** The entity, if it belongs to this tenant (its tenant returned); 404 exactly like a missing one otherwise. */
export const requireEntity = (entityId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    yield* workspace.getEntity(tenant.id, entityId).pipe(
      Effect.mapError((e) => e._tag === "NotFound" ? new NotFound({ message: `Entity ${entityId} not found` }) : e)
    )
    return tenant
  })

/** The tenant's and the global workflows, each with its startParams (omitted when its runbook lookup fails). */
export const workflowsOf = (tenantId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const config = yield* TenantConfig
    const workflows = yield* workspace.listWorkflows(tenantId)
    return yield* Effect.forEach(workflows, (wf) =>
      workspace.getRunbook(tenantId, wf.id).pipe(
        Effect.map((runbook): WorkflowEntry => ({ id: wf.id, name: wf.name, startParams: startParamsOf(runbook) })),
        // A workflow whose runbook lookup fails is still listed, without startParams.
        Effect.orElseSucceed((): WorkflowEntry => ({ id: wf.id, name: wf.name }))
      ), { concurrency: config.runbookConcurrency })
  })

export const listEntities = Effect.gen(function*() {
  const workspace = yield* WorkspaceClient
  const tenant = yield* (yield* Tenant).current
  return yield* workspace.listEntities(tenant.id)
})

/**
 * The steps of the tenant's workflows (its own and the global ones) that `select` picks: what a
 * filter on `awaiting` or on an agent's assignment becomes for the store, which sees only a
 * task's workflow and current step. A workflow whose runbook lookup fails contributes none
 * (its tasks have no `awaiting` either).
 */
export const stepsWhere = (tenantId: string, select: (step: RunbookStep) => boolean) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const config = yield* TenantConfig
    const workflows = yield* workspace.listWorkflows(tenantId)
    const perWorkflow = yield* Effect.forEach(workflows, (wf) =>
      workspace.getRunbook(tenantId, wf.id).pipe(
        Effect.map((runbook) => runbook.steps.filter(select).map((step): SelectedStep => ({ workflowId: wf.id, stepId: step.id, step }))),
        Effect.orElseSucceed((): ReadonlyArray<SelectedStep> => [])
      ), { concurrency: config.runbookConcurrency })
    return perWorkflow.flat()
  })

type RunbookStep = Workspace.Runbook["steps"][number]

/** A step stepsWhere picked: which one (what a TaskQuery's currentSteps takes), and the step itself. */
export interface SelectedStep {
  readonly workflowId: string
  readonly stepId: string
  readonly step: RunbookStep
}

/** The step references of selected steps, as a TaskQuery takes them. */
export const stepRefs = (steps: ReadonlyArray<SelectedStep>): ReadonlyArray<Workspace.StepRef> =>
  steps.map(({ stepId, workflowId }) => ({ workflowId, stepId }))

/** A board task as the list shows it: the TaskSummary fields, `awaiting` when it has one. */
const summaryOf = (task: Workspace.BoardTask): TaskSummary => {
  const summary: TaskSummary = taskView(task)
  return task.awaiting === undefined || isTerminalStatus(task.status) ? summary : { ...summary, awaiting: task.awaiting }
}

/** One page of the task list: its tasks, and the cursor of the next page when `limit` cut it short. */
export interface TaskPage {
  readonly tasks: ReadonlyArray<TaskSummary>
  readonly nextCursor?: string | undefined
}

/**
 * Board data: each non-terminal task's `awaiting` from its next step. A task whose lookup fails
 * has no `awaiting`; when the whole lookup fails no task has one, and the list still answers.
 * The entity's check, the list and the lookups are one upstream round trip where the workspace
 * answers the board itself (src/upstream/taskBoard.ts), else the entity and the list at once,
 * then the lookups.
 *
 * With `query` (src/api/taskListing.ts): `status`, `cursor` and `limit` go to the store as they
 * are; `awaiting` goes as the steps that await that component (stepsWhere), since `awaiting` is
 * derived from the runbook, not stored; the page is then checked against the `awaiting` the
 * next-step lookup gives (a task whose lookup fails drops out, so such a page may come short).
 * The store is asked for one task more than `limit`: that one says whether a next page exists.
 */
export const listTaskPage = (entityId: string, query: TaskListQuery = {}) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    const board = taskBoard(workspace)
    const notFound = (e: NotFound | BadRequest | UpstreamError) =>
      e._tag === "NotFound" ? new NotFound({ message: `Entity ${entityId} not found` }) : e
    const { awaiting, cursor, limit, status } = query
    if (status === undefined && awaiting === undefined && limit === undefined && cursor === undefined) {
      const tasks = yield* Effect.mapError(board(tenant.id, entityId), notFound)
      return { tasks: tasks.map(summaryOf) } satisfies TaskPage
    }
    const afterId = cursor === undefined ? undefined : taskIdOfCursor(cursor)
    if (cursor !== undefined && afterId === undefined) {
      // A missing entity answers 404 whatever the cursor.
      yield* requireEntity(entityId)
      return yield* Effect.fail(new BadRequest({ message: CURSOR_MESSAGE }))
    }
    let currentSteps: ReadonlyArray<Workspace.StepRef> | undefined
    if (awaiting !== undefined) {
      // Only a running task awaits anything; the entity is checked all the same.
      if (status !== undefined && isTerminalStatus(status)) return yield* Effect.as(requireEntity(entityId), { tasks: [] } satisfies TaskPage)
      currentSteps = stepRefs(yield* stepsWhere(tenant.id, (step) => step.displayHint.component === awaiting))
      if (currentSteps.length === 0) return yield* Effect.as(requireEntity(entityId), { tasks: [] } satisfies TaskPage)
    }
    const found = yield* Effect.mapError(
      board(tenant.id, entityId, { status, currentSteps, afterId, limit: limit === undefined ? undefined : limit + 1 }),
      notFound
    )
    const more = limit !== undefined && found.length > limit
    const page = more ? found.slice(0, limit) : found
    const summaries = page.map(summaryOf)
    return {
      tasks: awaiting === undefined ? summaries : summaries.filter((t) => t.awaiting === awaiting),
      nextCursor: more ? encodeTaskCursor(page[page.length - 1]!.id) : undefined
    } satisfies TaskPage
  })

/** The whole list (every task, or every task `query` selects without paging). */
export const listTaskSummaries = (entityId: string, query: TaskListQuery = {}) =>
  Effect.map(listTaskPage(entityId, query), (page) => page.tasks)

export const listEntityWorkflows = (entityId: string) => Effect.flatMap(requireEntity(entityId), (tenant) => workflowsOf(tenant.id))

/** Starts a workflow the entity can start, its context checked against the workflow's startParams first. */
export const createTask = (entityId: string, dto: CreateTaskDto) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* requireEntity(entityId)
    const workflows = yield* workflowsOf(tenant.id)
    const workflow = workflows.find((wf) => wf.id === dto.workflowId)
    if (workflow === undefined) {
      return yield* Effect.fail(
        new BadRequest({ message: `workflowId: "${dto.workflowId}" is not a workflow this entity can start` })
      )
    }
    const context = dto.context ?? {}
    if (workflow.startParams !== undefined) yield* checkContext(workflow.startParams, context, testWithin)
    return yield* workspace.createTask(tenant.id, entityId, { workflowId: workflow.id, context })
  })
