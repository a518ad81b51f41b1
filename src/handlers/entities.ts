import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { BadRequest, NotFound } from "../api/errors.js"
import type { TaskSummary, WorkflowEntry } from "../api/resources.js"
import { checkContext, startParamsOf } from "../services/startParams.js"
import { Tenant } from "../services/Tenant.js"
import { TenantConfig } from "../services/TenantConfig.js"
import { WorkspaceClient } from "../services/WorkspaceClient.js"
import { taskView } from "./taskView.js"

const TERMINAL = new Set(["COMPLETED", "FAILED"])

export const EntitiesLive = HttpApiBuilder.group(GatewayApi, "entities", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant
    const config = yield* TenantConfig

    /** The entity, if it belongs to this tenant; 404 exactly like a missing one otherwise. */
    const requireEntity = (entityId: string) =>
      Effect.flatMap(tenants.current, (tenant) =>
        workspace.getEntity(tenant.id, entityId).pipe(
          Effect.mapError((e) => e._tag === "NotFound" ? new NotFound({ message: `Entity ${entityId} not found` }) : e),
          Effect.as(tenant)
        ))

    const workflowsOf = (tenantId: string) =>
      Effect.flatMap(workspace.listWorkflows(tenantId), (workflows) =>
        Effect.forEach(workflows, (wf) =>
          workspace.getRunbook(tenantId, wf.id).pipe(
            Effect.map((runbook): WorkflowEntry => ({ id: wf.id, name: wf.name, startParams: startParamsOf(runbook) })),
            // A workflow whose runbook lookup fails is still listed, without startParams.
            Effect.orElseSucceed((): WorkflowEntry => ({ id: wf.id, name: wf.name }))
          ), { concurrency: config.runbookConcurrency }))

    return handlers
      .handle("listEntities", () => Effect.flatMap(tenants.current, (tenant) => workspace.listEntities(tenant.id)))
      .handle("listTasks", ({ path }) =>
        Effect.gen(function*() {
          const tenant = yield* requireEntity(path.entityId)
          const tasks = yield* workspace.listTasks(tenant.id, path.entityId)
          return yield* Effect.forEach(tasks, (task) => {
            const summary: TaskSummary = taskView(task)
            if (TERMINAL.has(task.status)) return Effect.succeed(summary)
            return workspace.getNextStep(tenant.id, task.id).pipe(
              Effect.map((next) => next.step === null ? summary : { ...summary, awaiting: next.step.displayHint.component }),
              // A failed lookup drops `awaiting` for this task only.
              Effect.orElseSucceed(() => summary)
            )
          }, { concurrency: config.nextStepConcurrency })
        }))
      .handle("listWorkflows", ({ path }) =>
        Effect.flatMap(requireEntity(path.entityId), (tenant) => workflowsOf(tenant.id)))
      .handle("createTask", ({ path, payload }) =>
        Effect.gen(function*() {
          const tenant = yield* requireEntity(path.entityId)
          const workflows = yield* workflowsOf(tenant.id)
          const workflow = workflows.find((wf) => wf.id === payload.workflowId)
          if (workflow === undefined) {
            return yield* Effect.fail(
              new BadRequest({ message: `workflowId: "${payload.workflowId}" is not a workflow this entity can start` })
            )
          }
          const context = payload.context ?? {}
          if (workflow.startParams !== undefined) yield* checkContext(workflow.startParams, context)
          return yield* workspace.createTask(tenant.id, path.entityId, { workflowId: workflow.id, context })
        }))
  }))
