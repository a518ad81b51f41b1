import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { optional } from "./optional.js"
import { CLIENT_SEQ_MAX, TaskEventDto } from "./dtos.js"
import { ANSWER_EVENTS_MAX, DEFAULT_EVENT_PAGE_BYTES, EVENT_PAGE_MAX, EventPageParams, PositionParam, TimelinePage } from "./eventPaging.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { TaskEvent } from "./resources.js"
import { TaskPath } from "./tasks.js"

export const EVENTS_KEY_HEADER = "x-svc-events-key"

/** The position a reconnecting EventSource last received (Node lower-cases header names). */
export const LAST_EVENT_ID_HEADER = "last-event-id"

export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.post("appendEvent", "/tasks/:taskId/events", {
      params: TaskPath,
      headers: { [EVENTS_KEY_HEADER]: optional(Schema.String) },
      payload: TaskEventDto,
      success: Schema.Struct({ ok: Schema.Literal(true), event: TaskEvent }),
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Append a task event")
      .annotate(
        OpenApi.Description,
        `Appends to the task's timeline. When SVC_INTERNAL_EVENTS_KEY is set, the \`${EVENTS_KEY_HEADER}\` ` +
          "header must carry it (401 otherwise). A producer's `seq` is its own: unique per task and `source` " +
          "(its event stream). Re-posting an identical event (same source and seq) answers the stored one; a " +
          "different event at a taken seq is a 409. A producer posting in seq order is read in seq order. " +
          `\`seq\` is at most ${CLIENT_SEQ_MAX} (2^31-1). Nothing the gateway writes (its own events, people's ` +
          "decisions, agents' actions) takes a producer's seq. The stored event carries `position` (its place in the " +
          "task's merged timeline) and `origin: \"producer\"`; the sources `workspace`, `audit` and `agent:...` are " +
          "refused (400): only the gateway writes those, marked `origin: \"gateway\"` or `\"agent\"` by the store."
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/tasks/:taskId/events", {
      params: TaskPath,
      query: EventPageParams,
      success: TimelinePage,
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "List task events")
      .annotate(
        OpenApi.Description,
        "The task's timeline in the store's order: every event once, each producer's events by seq ascending, " +
          "the gateway's own events where they were written. Needs no key. Paging: `after` (an event's `position`) " +
          `returns only the events that follow it, \`limit\` (1..${EVENT_PAGE_MAX}) at most that many; a follower ` +
          "passes the last position it has as `after` and reads only what is new. A position past every one the " +
          "store has given out (a `<tx>-<n>` one on SQLite, whose positions are digits; a transaction not yet begun " +
          "on PostgreSQL) is a 400 naming `after`: no later event would follow it. An answer holds about " +
          `SVC_EVENTS_PAGE_BYTES (default ${DEFAULT_EVENT_PAGE_BYTES} bytes of event JSON, UTF-8) and at most ${ANSWER_EVENTS_MAX} events: ` +
          "it stops after the event that takes it to that size (a larger event comes alone). An answer that stopped " +
          "before the end (budget or limit) always carries `hasMore: true` and `nextAfter`: pass that as `after` to read on."
      )
  )
  .add(
    HttpApiEndpoint.get("streamEvents", "/tasks/:taskId/events/stream", {
      params: TaskPath,
      query: { after: Schema.optionalKey(PositionParam) },
      headers: { [LAST_EVENT_ID_HEADER]: Schema.optionalKey(PositionParam) },
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/event-stream" })),
      error: [...CommonErrors, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Stream task events (Server-Sent Events)")
      .annotate(
        OpenApi.Description,
        "The task's timeline as Server-Sent Events, live: each event is one message with `id: <position>` and " +
          "`data: <the TaskEvent JSON as GET /events returns it>` (event name `message`). It starts after the " +
          "position in the `Last-Event-ID` header (an EventSource sends it when it reconnects) or in `after` " +
          "(one past every position the store has given out is a 400 naming the one sent, as for GET /events); " +
          "without either, the existing events come first, then new ones as they are appended. A comment line " +
          "(`: keep-alive`) is sent after 15 s of silence. 404 before the stream starts for an unknown task; 503 " +
          "when the process serves as many streams as SVC_EVENT_STREAMS_MAX allows. The stream ends when the " +
          "process shuts down (reconnect with Last-Event-ID). Events come in pages of about SVC_EVENTS_PAGE_BYTES; the " +
          "next page is made once the socket has taken the last, and a client that takes none of its pending bytes " +
          "for SVC_EVENTS_STREAM_STALL_MS is disconnected (reconnect with Last-Event-ID)."
      )
  )
  .annotate(OpenApi.Title, "Task events")
  .annotate(OpenApi.Description, "Append-only timeline per task")
{}
