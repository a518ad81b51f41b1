import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { intBetween } from "../api/decimalInt.js"
import { ConflictWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { CreatedTask, EntitySummary } from "../api/resources.js"
import { BoardTask, Runbook, StepRef, Task, Tenant, Workflow } from "./model.js"
import { closed } from "../api/dtos.js"
import { EntityPath, IdParam, NonEmpty, TenantIdParam, TenantPath, WorkspaceErrors } from "./paths.js"
import { jsonObject } from "../api/jsonObject.js"

export const CreateTaskRequest = Schema.Struct({
  workflowId: NonEmpty(256).annotate({ description: "A workflow of this tenant or a global one" }),
  // Described on the wire side: the document shows the encoded schema.
  context: jsonObject({ description: "Forwarded into the workflow start payload" }).pipe(
    Schema.withDecodingDefaultKey(Effect.sync(() => ({})))
  )
}).pipe(closed("WorkspaceCreateTaskRequest"))

const LIST_LIMIT_MAX = 10_000

/** A TaskQuery (src/services/WorkspaceClient.ts) as query parameters; none: every task. */
export const TaskQueryParams = Schema.Struct({
  status: Schema.optionalKey(NonEmpty(64).annotate({ description: "Only tasks in this status" })),
  steps: Schema.optionalKey(Schema.fromJsonString(Schema.Array(StepRef)).annotate({
      description: "JSON array of {workflowId, stepId}: only tasks whose current step is one of these"
    })),
  after: Schema.optionalKey(IdParam("Only the tasks after this one (a task of this entity; 400 otherwise)")),
  limit: Schema.optionalKey(intBetween(1, LIST_LIMIT_MAX)
      .annotate({ description: `At most this many tasks, 1..${LIST_LIMIT_MAX}` }))
})

export class TenantsGroup extends HttpApiGroup.make("tenants")
  .add(
    HttpApiEndpoint.get("resolveTenant", "/tenants/by-slug/:slug", {
      params: Schema.Struct({ slug: NonEmpty(256) }),
      success: Tenant,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Resolve a tenant by slug")
      .annotate(OpenApi.Description, "The tenant a gateway is bound to (SVC_TENANT_SLUG). 404 when no tenant has the slug.")
  )
  .add(
    HttpApiEndpoint.get("listEntities", "/tenants/:tenantId/entities", {
      params: TenantPath,
      success: Schema.Array(EntitySummary),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List the tenant's entities")
      .annotate(OpenApi.Description, "Every entity of the tenant; an empty list for an unknown tenant.")
  )
  .add(
    HttpApiEndpoint.get("getEntity", "/tenants/:tenantId/entities/:entityId", {
      params: EntityPath,
      success: EntitySummary,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get one entity")
      .annotate(OpenApi.Description, "404 when the entity does not exist or belongs to another tenant.")
  )
  .add(
    HttpApiEndpoint.get("listTasks", "/tenants/:tenantId/entities/:entityId/tasks", {
      params: EntityPath,
      query: TaskQueryParams,
      success: Schema.Array(Task),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List an entity's tasks")
      .annotate(
        OpenApi.Description,
        "The full task records of the entity in creation order, scoped to the tenant (board data). The query " +
          "parameters narrow it (all must hold): `status`, `steps` (current step one of these), `after`, `limit`."
      )
  )
  .add(
    HttpApiEndpoint.get("listTaskBoard", "/tenants/:tenantId/entities/:entityId/board", {
      params: EntityPath,
      query: TaskQueryParams,
      success: Schema.Array(BoardTask),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List an entity's tasks with what each awaits")
      .annotate(
        OpenApi.Description,
        "The gateway's task list in one round trip: what listTasks answers (same query parameters), each task " +
          "with `awaiting`, its current step's displayHint.component as getNextSteps would give it (absent for a " +
          "terminal task or where that lookup fails). 404 when the entity does not exist or belongs to another " +
          "tenant. Optional: against a service without it (404), the gateway falls back to getEntity, listTasks " +
          "and getNextSteps."
      )
  )
  .add(
    HttpApiEndpoint.post("createTask", "/tenants/:tenantId/entities/:entityId/tasks", {
      params: EntityPath,
      headers: IdempotencyKeyHeaders,
      payload: CreateTaskRequest,
      success: CreatedTask.pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, ConflictWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Start a task run")
      .annotate(
        OpenApi.Description,
        "Creates a task of `workflowId` for the entity, IN_PROGRESS at the runbook's first step. 404 for an " +
          "entity outside the tenant; 400 for an unknown workflow or an invalid context."
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkflows", "/tenants/:tenantId/workflows", {
      params: TenantPath,
      success: Schema.Array(Workflow),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List available workflows")
      .annotate(OpenApi.Description, "The tenant's own workflows plus the global ones (tenantId null).")
  )
  .add(
    HttpApiEndpoint.get("getRunbook", "/tenants/:tenantId/workflows/:workflowId/runbook", {
      params: Schema.Struct({ tenantId: TenantIdParam, workflowId: NonEmpty(256) }),
      success: Runbook,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get a workflow's runbook")
      .annotate(
        OpenApi.Description,
        "The config schema (its global block yields the start params) and the steps. 404 when the workflow is " +
          "unknown, another tenant's, or has no runbook."
      )
  )
  .annotate(OpenApi.Title, "Tenants, entities and workflows")
  .annotate(OpenApi.Description, "Tenant resolution, entities, their tasks, and the workflows that can be started")
{}
