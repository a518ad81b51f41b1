import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { TaskEventDto } from "./dtos.js"
import { ConflictWire, NotFoundWire, UnauthorizedWire } from "./errors.js"
import { TaskEvent } from "./resources.js"
import { TaskPath } from "./tasks.js"

export const EVENTS_KEY_HEADER = "x-svc-events-key"

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.post("appendEvent", "/tasks/:taskId/events")
      .setPath(TaskPath)
      .setHeaders(Schema.Struct({ [EVENTS_KEY_HEADER]: Schema.optional(Schema.String) }))
      .setPayload(TaskEventDto)
      .addSuccess(Schema.Struct({ ok: Schema.Literal(true), event: TaskEvent }))
      .addError(UnauthorizedWire)
      .addError(ConflictWire)
      .annotate(OpenApi.Summary, "Append a task event")
      .annotate(
        OpenApi.Description,
        `Appends to the task's timeline. When SVC_INTERNAL_EVENTS_KEY is set, the \`${EVENTS_KEY_HEADER}\` ` +
          "header must carry it (401 otherwise). Re-posting an identical event (same seq) is idempotent; " +
          "a different body with a seq already taken is a 409."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/tasks/:taskId/events")
      .setPath(TaskPath)
      .addSuccess(Schema.Struct({ events: Schema.Array(TaskEvent) }))
      .annotate(OpenApi.Summary, "List task events")
      .annotate(OpenApi.Description, "The task's timeline ordered by seq ascending. Needs no key.")
  )
  .addError(NotFoundWire)
  .annotate(OpenApi.Title, "Task events")
  .annotate(OpenApi.Description, "Append-only timeline per task")
{}
