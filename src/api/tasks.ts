import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { TaskActionDto, TaskRowActionDto } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { TaskIdInput } from "./ids.js"
import { Ok, StepSnapshots, UiState } from "./resources.js"

export const TaskPath = Schema.Struct({ taskId: TaskIdInput })

export class TasksGroup extends HttpApiGroup.make("tasks")
  .add(
    HttpApiEndpoint.get("getUi", "/tasks/:taskId/ui", { params: TaskPath, success: UiState, error: [...CommonErrors, NotFoundWire] })
      .annotate(OpenApi.Summary, "Combined UI state")
      .annotate(
        OpenApi.Description,
        "The task, its current step and every step's status. The tenant is checked against the task's " +
          "tenantId, refreshing the cached tenant once on a mismatch."
      )
  )
  .add(
    HttpApiEndpoint.get("getSnapshots", "/tasks/:taskId/snapshots", {
      params: TaskPath,
      success: StepSnapshots,
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Step snapshots")
      .annotate(OpenApi.Description, "Map of step id to what was shown and decided at that completed step.")
  )
  .add(
    HttpApiEndpoint.post("action", "/tasks/:taskId/action", {
      params: TaskPath,
      payload: TaskActionDto,
      success: Ok,
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Approve or reject the current step")
      .annotate(
        OpenApi.Description,
        "type=approved sends the approve signal, type=rejected the reject signal; `comments` becomes `reason`. " +
          "The decision is bound to one step: `step` when given, else the step current when the request arrives. " +
          "The same decision on that step again is a no-op answering `{ok: true}`; a step that is no longer " +
          "current, or was decided the other way, is a 409 naming the current step (and so is an " +
          "Idempotency-Key reused for a different request)."
      )
  )
  .add(
    HttpApiEndpoint.post("rowAction", "/tasks/:taskId/row-action", {
      params: TaskPath,
      payload: TaskRowActionDto,
      success: Ok,
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Row action on a table step")
      .annotate(
        OpenApi.Description,
        "Forwarded as a user_action signal of kind row_action. Only the `expenses` ledger is accepted; " +
          "edit_cell needs `field` and `value`. Besides the specification's edit_cell and reject_row, `resolve_flag` " +
          "marks a row that needs attention as resolved (NEEDS_ATTENTION → RESOLVED; another status is a 400 with " +
          "`currentStatus`), recorded in the timeline as row.resolved. Bound to one step like an action (`step`, else the step current " +
          "when the request arrives): a step that is no longer current is a 409 naming the current step."
      )
  )
  .annotate(OpenApi.Title, "Task lifecycle")
  .annotate(OpenApi.Description, "Drive a task: UI state, snapshots, approve/reject, row actions")
{}
