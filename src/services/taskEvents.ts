/**
 * The task event timeline of spec §4 ("Task events"), shared by the HTTP handlers
 * (src/handlers/events.ts) and the agent tool server (src/mcp/tools.ts). The events key check
 * of POST /v1/tasks/:taskId/events stays with the HTTP handler: agents authenticate with their
 * own key at the tool server instead.
 */
import * as Effect from "effect/Effect"
import type { TaskEventDto } from "../api/dtos.js"
import { ANSWER_EVENTS_MAX, DEFAULT_EVENT_PAGE_BYTES, eventSize, eventsWithinBytes } from "../api/eventPaging.js"
import type { TaskEvent } from "../api/resources.js"
import { Tenant } from "./Tenant.js"
import { TaskEventBell } from "./TaskEventBell.js"
import { intSetting } from "../config/TenantConfig.js"
import { type EventPage, WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** The bytes of one timeline answer and of one stream page (SVC_EVENTS_PAGE_BYTES, default 1 MiB; a stream's at most 256 KiB). */
export const eventPageBytesSetting = intSetting("SVC_EVENTS_PAGE_BYTES", DEFAULT_EVENT_PAGE_BYTES)

export const appendTaskEvent = (taskId: string, dto: TaskEventDto) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    const event = yield* workspace.appendEvent(tenant.id, taskId, dto)
    // Open streams of the task read it now (whichever workspace stored it).
    ;(yield* TaskEventBell).ring(taskId)
    return event
  })

/** The timeline in seq order; with `page`, only what follows `afterSeq`, at most `limit` events. */
export const listTaskEvents = (taskId: string, page?: EventPage) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    return yield* workspace.listEvents(tenant.id, taskId, page)
  })

/** One answer of the timeline: when it stops before the end, `nextAfterSeq` says where to go on. */
export interface TimelinePage {
  readonly events: ReadonlyArray<TaskEvent>
  /** Present when more may follow: the `afterSeq` of the next read (the last seq of `events`). */
  readonly nextAfterSeq?: number
}

/**
 * The events after `afterSeq` (all when undefined), at most `limit` (ANSWER_EVENTS_MAX without
 * it), stopping after the event that takes the answer to `maxBytes` (one larger event comes
 * alone). One more event than asked is read to learn whether the count cut it; an answer
 * stopped by its bytes says more may follow even when the timeline happens to end there.
 */
export const readTimelinePage = (
  taskId: string,
  page: { readonly afterSeq?: number | undefined; readonly limit?: number | undefined },
  maxBytes: number
) =>
  Effect.map(
    listTaskEvents(taskId, { afterSeq: page.afterSeq, limit: (page.limit ?? ANSWER_EVENTS_MAX) + 1, maxBytes }),
    (got): TimelinePage => {
      const limit = page.limit ?? ANSWER_EVENTS_MAX
      // Cut here too: a workspace service may not know maxBytes.
      const sizes = got.map(eventSize)
      const n = Math.min(eventsWithinBytes(sizes, maxBytes), limit)
      const events = n === got.length ? got : got.slice(0, n)
      let bytes = 0
      for (let i = 0; i < n; i++) bytes += sizes[i]!
      return n > 0 && (got.length > n || bytes >= maxBytes) ? { events, nextAfterSeq: events[n - 1]!.seq } : { events }
    }
  )
