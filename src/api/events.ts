import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { CLIENT_SEQ_MAX, TaskEventDto } from "./dtos.js"
import { EVENT_PAGE_MAX, EventPageParams, SeqParam } from "./eventPaging.js"
import { ConflictWire, NotFoundWire, UnauthorizedWire } from "./errors.js"
import { TaskEvent } from "./resources.js"
import { TaskPath } from "./tasks.js"

export const EVENTS_KEY_HEADER = "x-svc-events-key"

/** The seq a reconnecting EventSource last received (Node lower-cases header names). */
export const LAST_EVENT_ID_HEADER = "last-event-id"

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
          "a different body with a seq already taken is a 409. `seq` is at most " + `${CLIENT_SEQ_MAX} (2^31-1; 400 past it): ` +
          "the workflow engine writes its own events (source `workspace`) at the seqs after the task's highest, " +
          "so they may lie above it; posting a seq the engine took is the same 409."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/tasks/:taskId/events")
      .setPath(TaskPath)
      .setUrlParams(EventPageParams)
      .addSuccess(Schema.Struct({ events: Schema.Array(TaskEvent) }))
      .annotate(OpenApi.Summary, "List task events")
      .annotate(
        OpenApi.Description,
        "The task's timeline ordered by seq ascending. Needs no key. Opt-in paging: `afterSeq` returns only " +
          `the events with a greater seq, \`limit\` (1..${EVENT_PAGE_MAX}) at most that many; a follower passes the ` +
          "last seq it has as `afterSeq` and reads only what is new."
      )
  )
  .add(
    HttpApiEndpoint.get("streamEvents", "/tasks/:taskId/events/stream")
      .setPath(TaskPath)
      .setUrlParams(Schema.Struct({ afterSeq: Schema.optionalWith(SeqParam, { exact: true }) }))
      .setHeaders(Schema.Struct({ [LAST_EVENT_ID_HEADER]: Schema.optionalWith(SeqParam, { exact: true }) }))
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .annotate(OpenApi.Summary, "Stream task events (Server-Sent Events)")
      .annotate(
        OpenApi.Description,
        "The task's timeline as Server-Sent Events, live: each event is one message with `id: <seq>` and " +
          "`data: <the TaskEvent JSON as GET /events returns it>` (event name `message`). It starts after the " +
          "seq in the `Last-Event-ID` header (an EventSource sends it when it reconnects) or in `afterSeq`; " +
          "without either, the existing events come first, then new ones as they are appended. A comment line " +
          "(`: keep-alive`) is sent at least every 15 s. 404 before the stream starts for an unknown task; 503 " +
          "when the process serves as many streams as SVC_EVENT_STREAMS_MAX allows. The stream ends when the " +
          "process shuts down (reconnect with Last-Event-ID)."
      )
  )
  .addError(NotFoundWire)
  .annotate(OpenApi.Title, "Task events")
  .annotate(OpenApi.Description, "Append-only timeline per task")
{}
