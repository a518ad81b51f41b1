import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { closed, TimelineRecord, WorkspaceTaskEventDto } from "../api/dtos.js"
import { TimelinePage, WorkspaceEventPageParams } from "../api/eventPaging.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../api/errors.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { StepSnapshots, TaskEvent } from "../api/resources.js"
import { NextStep, NextStepOf, Signal, Task } from "./model.js"
import { TaskIdParam, TenantPath, TenantTaskPath, WorkspaceErrors } from "./paths.js"

/** Ids per getNextSteps call: the HTTP client splits longer lists. */
export const MAX_NEXT_STEP_IDS = 500

export const NextStepsRequest = Schema.Struct({
  taskIds: Schema.Array(TaskIdParam).check(Schema.isMaxLength(MAX_NEXT_STEP_IDS))
}).pipe(closed("WorkspaceNextStepsRequest"))

export class TasksGroup extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("getTask", "/tasks/:taskId", {
      params: Schema.Struct({ taskId: TaskIdParam }),
      success: Task,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get a task (unscoped)")
      .annotate(
        OpenApi.Description,
        "The task record by id, whatever its tenant: the gateway compares its tenantId with its own. A composite " +
          "child id resolves to its root task."
      )
  )
  .add(
    HttpApiEndpoint.get("getNextStep", "/tenants/:tenantId/tasks/:taskId/next-step", {
      params: TenantTaskPath,
      success: NextStep,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get a task's next step")
      .annotate(
        OpenApi.Description,
        "The current step (null for a terminal task) and every step's status. A FILE_UPLOAD step's args carry a " +
          "submit_file action naming the ingest path and the signal to send. 404 when the task is not the " +
          "tenant's or its workflow has no runbook."
      )
  )
  .add(
    HttpApiEndpoint.post("getNextSteps", "/tenants/:tenantId/next-steps", {
      params: TenantPath,
      payload: NextStepsRequest,
      success: Schema.Array(NextStepOf),
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get the next steps of many tasks")
      .annotate(
        OpenApi.Description,
        "A read (POST only to carry the id list): one answer per requested task id, in order, with the task's " +
          "next step as getNextStep answers it, or `nextStep: null` where getNextStep would answer 404 (missing, " +
          `another tenant's, no runbook). At most ${MAX_NEXT_STEP_IDS} ids per call.`
      )
  )
  .add(
    HttpApiEndpoint.get("getSnapshots", "/tenants/:tenantId/tasks/:taskId/snapshots", {
      params: TenantTaskPath,
      success: StepSnapshots,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Get a task's step snapshots")
      .annotate(OpenApi.Description, "Map of step id to what was shown and decided at that completed step.")
  )
  .add(
    HttpApiEndpoint.post("signal", "/tenants/:tenantId/signals", {
      params: TenantPath,
      headers: IdempotencyKeyHeaders,
      payload: Signal,
      success: HttpApiSchema.NoContent,
      error: [...WorkspaceErrors, ConflictWire, ForbiddenWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Send a workflow signal")
      .annotate(
        OpenApi.Description,
        "Records the signal durably and delivers it to the task's runbook (a composite child id resolves to its " +
          "root task): `approve` completes the current step, `reject` fails the task, `file_submitted` completes a " +
          "FILE_UPLOAD step, `user_action` with payload.kind `row_action` applies the subledger rules (400 with " +
          "currentStatus or code INVALID_FIELD). 400 when the task cannot take the signal. With `expectedStep`, the " +
          "signal applies to that step only: the decision already taken on it again is a no-op (204), a step no " +
          "longer current or decided the other way is a 409 naming the current step."
      )
  )
  .add(
    HttpApiEndpoint.post("appendEvent", "/tenants/:tenantId/tasks/:taskId/events", {
      params: TenantTaskPath,
      headers: IdempotencyKeyHeaders,
      payload: WorkspaceTaskEventDto,
      success: TaskEvent,
      error: [...WorkspaceErrors, ConflictWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Append a task event")
      .annotate(
        OpenApi.Description,
        "Appends a producer's event (origin `producer`) to the task's timeline and returns the persisted record. " +
          "A seq is unique per task and source: re-posting an identical event returns the stored one; a different " +
          "event at a taken seq is a 409. The gateway's own sources " +
          "(`audit`, `workspace`, `agent:...`) are refused (400), as on the gateway."
      )
  )
  .add(
    HttpApiEndpoint.post("recordEvent", "/tenants/:tenantId/tasks/:taskId/records", {
      params: TenantTaskPath,
      headers: IdempotencyKeyHeaders,
      payload: TimelineRecord,
      success: TaskEvent,
      error: [...WorkspaceErrors, ConflictWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Record an event the gateway vouches for")
      .annotate(
        OpenApi.Description,
        "The gateway's own record (origin `gateway`, read with seq = position) or an agent's own event (origin " +
          "`agent`, its seq the next of its source when absent). For the gateway in front of this service only."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/tenants/:tenantId/tasks/:taskId/events", {
      params: TenantTaskPath,
      query: WorkspaceEventPageParams,
      success: TimelinePage,
      error: [...WorkspaceErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List task events")
      .annotate(
        OpenApi.Description,
        "The task's timeline in position order (the store's order; each producer's events in seq order); with `after` " +
          "only the events after that position, with `limit` at most that many, with `maxBytes` only up to the event " +
          "that takes the answer's size to that many bytes (the first event always). An answer that stopped before " +
          "the end carries `hasMore` and `nextAfter`."
      )
  )
  .annotate(OpenApi.Title, "Tasks, signals and events")
  .annotate(OpenApi.Description, "Task records, next steps, snapshots, workflow signals and the event timeline")
{}
