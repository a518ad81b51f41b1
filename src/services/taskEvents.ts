/**
 * The task event timeline of spec §4 ("Task events"), shared by the HTTP handlers
 * (src/handlers/events.ts) and the agent tool server (src/mcp/tools.ts). The events key check
 * of POST /v1/tasks/:taskId/events stays with the HTTP handler: agents authenticate with their
 * own key at the tool server instead.
 */
import * as Effect from "effect/Effect"
import type { TaskEventDto, TimelineRecord } from "../api/dtos.js"
import { ANSWER_EVENTS_MAX, type TimelinePage } from "../api/eventPaging.js"
import type { BadRequest, NotFound, UpstreamError } from "../api/errors.js"
import { Tenant } from "./Tenant.js"
import { TaskEventBell } from "./TaskEventBell.js"
import { intSetting } from "../config/read.js"
import { type EventPage, WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** The bytes of one timeline answer and of one stream page (SVC_EVENTS_PAGE_BYTES, default 1 MiB; a stream's at most 256 KiB). */
export const eventPageBytesSetting = intSetting("SVC_EVENTS_PAGE_BYTES")

export const appendTaskEvent = (taskId: string, dto: TaskEventDto) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    const event = yield* workspace.appendEvent(tenant.id, taskId, dto)
    // Open streams of the task read it now (whichever workspace stored it).
    ;(yield* TaskEventBell).ring(taskId)
    return event
  })

/** Appends an event the gateway vouches for (an agent's own, or the gateway's record). */
export const recordTaskEvent = (taskId: string, record: TimelineRecord) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    const event = yield* workspace.recordEvent(tenant.id, taskId, record)
    ;(yield* TaskEventBell).ring(taskId)
    return event
  })

/** The timeline in the store's order; with `page`, only what follows position `after`, at most `limit` events. */
export const listTaskEvents = (taskId: string, page?: EventPage) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    return yield* workspace.listEvents(tenant.id, taskId, page)
  })

/**
 * One answer of the timeline: the events after `after` (from the start when undefined), at
 * most `limit` (ANSWER_EVENTS_MAX without it), stopping after the event that takes the answer to
 * `maxBytes` (one larger event comes alone). The store cuts the page and says whether more
 * follows (`hasMore`, `nextAfter`): counted once, one way.
 */
export const readTimelinePage = (
  taskId: string,
  page: { readonly after?: string | undefined; readonly limit?: number | undefined },
  maxBytes: number
): Effect.Effect<TimelinePage, NotFound | BadRequest | UpstreamError, Tenant | WorkspaceClient> =>
  listTaskEvents(taskId, { after: page.after, limit: page.limit ?? ANSWER_EVENTS_MAX, maxBytes })
