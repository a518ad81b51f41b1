import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { CreateTaskDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { UuidInput } from "./ids.js"
import { CreatedTask, EntitySummary, TaskSummary, WorkflowEntry } from "./resources.js"
import { NEXT_CURSOR_HEADER, TASK_PAGE_MAX, TaskListParams } from "./taskListing.js"

const EntityPath = Schema.Struct({ entityId: UuidInput })

export class EntitiesGroup extends HttpApiGroup.make("entities")
  .add(
    HttpApiEndpoint.get("listEntities", "/entities", { success: Schema.Array(EntitySummary), error: CommonErrors })
      .annotate(OpenApi.Summary, "List entities")
      .annotate(OpenApi.Description, "Every entity of the tenant this gateway is bound to.")
  )
  .add(
    HttpApiEndpoint.get("listTasks", "/entities/:entityId/tasks", {
      params: EntityPath,
      query: TaskListParams,
      success: Schema.Array(TaskSummary),
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List an entity's tasks")
      .annotate(
        OpenApi.Description,
        "Board data. The next step of each non-terminal task is loaded in parallel to fill `awaiting`; " +
          "a failed lookup drops `awaiting` for that task only. COMPLETED and FAILED tasks skip the lookup. " +
          "Without query parameters: every task of the entity, oldest first. Opt-in: `status` keeps the tasks in " +
          "that status, `awaiting` the running tasks whose current step awaits that component; `limit` " +
          `(1..${TASK_PAGE_MAX}) pages the list: when more tasks may follow, the answer carries the header ` +
          `\`${NEXT_CURSOR_HEADER}\`, to send back as \`cursor\` (with the same filters) for the next page. A page may ` +
          "hold fewer than `limit` tasks (even none) and still have a next one; the list ends at the answer " +
          `without \`${NEXT_CURSOR_HEADER}\`. A bad value is a 400 naming the parameter.`
      )
  )
  .add(
    HttpApiEndpoint.get("listWorkflows", "/entities/:entityId/workflows", {
      params: EntityPath,
      success: Schema.Array(WorkflowEntry),
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List startable workflows")
      .annotate(
        OpenApi.Description,
        "The tenant's workflows plus the global ones. `startParams` derive from the global block of each " +
          "runbook's config schema and are omitted when the runbook lookup fails."
      )
  )
  .add(
    HttpApiEndpoint.post("createTask", "/entities/:entityId/tasks", {
      params: EntityPath,
      payload: CreateTaskDto,
      success: CreatedTask.pipe(HttpApiSchema.status(201)),
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Start a task")
      .annotate(
        OpenApi.Description,
        "Starts a workflow run for the entity. `workflowId` must be one the workflows list returns; " +
          "`context` is checked against its startParams before it is forwarded."
      )
  )
  .annotate(OpenApi.Title, "Entities")
  .annotate(OpenApi.Description, "The tenant's entities, their tasks and the workflows they can start")
{}
