import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { ConflictWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { CreatedTask, EntitySummary } from "../api/resources.js"
import { Runbook, StepRef, Task, Tenant, Workflow } from "./model.js"
import { closed } from "../api/dtos.js"
import { EntityPath, IdParam, JsonObject, NonEmpty, TenantIdParam, TenantPath } from "./paths.js"

export const CreateTaskRequest = Schema.Struct({
  workflowId: NonEmpty(256).annotations({ description: "A workflow of this tenant or a global one" }),
  context: Schema.optionalWith(JsonObject, { default: () => ({}) }).annotations({
    description: "Forwarded into the workflow start payload"
  })
}).pipe(closed("WorkspaceCreateTaskRequest"))

const LIST_LIMIT_MAX = 10_000

/** A TaskQuery (src/services/WorkspaceClient.ts) as query parameters; none: every task. */
export const TaskQueryParams = Schema.Struct({
  status: Schema.optionalWith(NonEmpty(64).annotations({ description: "Only tasks in this status" }), { exact: true }),
  steps: Schema.optionalWith(
    Schema.parseJson(Schema.Array(StepRef)).annotations({
      description: "JSON array of {workflowId, stepId}: only tasks whose current step is one of these"
    }),
    { exact: true }
  ),
  after: Schema.optionalWith(IdParam("Only the tasks after this one (a task of this entity; 400 otherwise)"), { exact: true }),
  limit: Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, LIST_LIMIT_MAX))
      .annotations({ description: `At most this many tasks, 1..${LIST_LIMIT_MAX}` }),
    { exact: true }
  )
})

export class TenantsGroup extends HttpApiGroup.make("tenants")
  .add(
    HttpApiEndpoint.get("resolveTenant", "/tenants/by-slug/:slug")
      .setPath(Schema.Struct({ slug: NonEmpty(256) }))
      .addSuccess(Tenant)
      .annotate(OpenApi.Summary, "Resolve a tenant by slug")
      .annotate(OpenApi.Description, "The tenant a gateway is bound to (SVC_TENANT_SLUG). 404 when no tenant has the slug.")
  )
  .add(
    HttpApiEndpoint.get("listEntities", "/tenants/:tenantId/entities")
      .setPath(TenantPath)
      .addSuccess(Schema.Array(EntitySummary))
      .annotate(OpenApi.Summary, "List the tenant's entities")
      .annotate(OpenApi.Description, "Every entity of the tenant; an empty list for an unknown tenant.")
  )
  .add(
    HttpApiEndpoint.get("getEntity", "/tenants/:tenantId/entities/:entityId")
      .setPath(EntityPath)
      .addSuccess(EntitySummary)
      .annotate(OpenApi.Summary, "Get one entity")
      .annotate(OpenApi.Description, "404 when the entity does not exist or belongs to another tenant.")
  )
  .add(
    HttpApiEndpoint.get("listTasks", "/tenants/:tenantId/entities/:entityId/tasks")
      .setPath(EntityPath)
      .setUrlParams(TaskQueryParams)
      .addSuccess(Schema.Array(Task))
      .annotate(OpenApi.Summary, "List an entity's tasks")
      .annotate(
        OpenApi.Description,
        "The full task records of the entity in creation order, scoped to the tenant (board data). The query " +
          "parameters narrow it (all must hold): `status`, `steps` (current step one of these), `after`, `limit`."
      )
  )
  .add(
    HttpApiEndpoint.post("createTask", "/tenants/:tenantId/entities/:entityId/tasks")
      .setPath(EntityPath)
      .setHeaders(IdempotencyKeyHeaders)
      .setPayload(CreateTaskRequest)
      .addSuccess(CreatedTask, { status: 201 })
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Start a task run")
      .annotate(
        OpenApi.Description,
        "Creates a task of `workflowId` for the entity, IN_PROGRESS at the runbook's first step. 404 for an " +
          "entity outside the tenant; 400 for an unknown workflow or an invalid context."
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkflows", "/tenants/:tenantId/workflows")
      .setPath(TenantPath)
      .addSuccess(Schema.Array(Workflow))
      .annotate(OpenApi.Summary, "List available workflows")
      .annotate(OpenApi.Description, "The tenant's own workflows plus the global ones (tenantId null).")
  )
  .add(
    HttpApiEndpoint.get("getRunbook", "/tenants/:tenantId/workflows/:workflowId/runbook")
      .setPath(Schema.Struct({ tenantId: TenantIdParam, workflowId: NonEmpty(256) }))
      .addSuccess(Runbook)
      .annotate(OpenApi.Summary, "Get a workflow's runbook")
      .annotate(
        OpenApi.Description,
        "The config schema (its global block yields the start params) and the steps. 404 when the workflow is " +
          "unknown, another tenant's, or has no runbook."
      )
  )
  .addError(NotFoundWire)
  .annotate(OpenApi.Title, "Tenants, entities and workflows")
  .annotate(OpenApi.Description, "Tenant resolution, entities, their tasks, and the workflows that can be started")
{}
