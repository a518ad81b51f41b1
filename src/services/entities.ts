/**
 * The entity operations of spec §4 ("Entities"), shared by the HTTP handlers
 * (src/handlers/entities.ts) and the agent tool server (src/mcp/tools.ts): one place for each
 * rule (tenant scoping, `awaiting`, startParams, the workflow check before a start).
 */
import * as Effect from "effect/Effect"
import type { CreateTaskDto } from "../api/dtos.js"
import { BadRequest, NotFound } from "../api/errors.js"
import type { TaskSummary, WorkflowEntry } from "../api/resources.js"
import { taskView } from "./taskView.js"
import { testWithin } from "../lib/boundedRegExp.js"
import { checkContext, startParamsOf } from "./startParams.js"
import { Tenant } from "./Tenant.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

const TERMINAL = new Set(["COMPLETED", "FAILED"])

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
 * Board data: each non-terminal task's `awaiting` from its next step, all of them fetched in one
 * upstream call (terminal tasks are not asked about). A task whose lookup fails has no `awaiting`;
 * when the whole call fails no task has one, and the list still answers.
 */
export const listTaskSummaries = (entityId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* requireEntity(entityId)
    const tasks = yield* workspace.listTasks(tenant.id, entityId)
    const open = tasks.filter((task) => !TERMINAL.has(task.status)).map((task) => task.id)
    const answers = open.length === 0
      ? []
      : yield* workspace.getNextSteps(tenant.id, open).pipe(Effect.orElseSucceed(() => []))
    const awaiting = new Map<string, string>()
    for (const { nextStep, taskId } of answers) {
      if (nextStep?.step != null) awaiting.set(taskId, nextStep.step.displayHint.component)
    }
    return tasks.map((task): TaskSummary => {
      const summary: TaskSummary = taskView(task)
      const component = TERMINAL.has(task.status) ? undefined : awaiting.get(task.id)
      return component === undefined ? summary : { ...summary, awaiting: component }
    })
  })

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
