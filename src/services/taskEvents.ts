/**
 * The task event timeline of spec §4 ("Task events"), shared by the HTTP handlers
 * (src/handlers/events.ts) and the agent tool server (src/mcp/tools.ts). The events key check
 * of POST /v1/tasks/:taskId/events stays with the HTTP handler: agents authenticate with their
 * own key at the tool server instead.
 */
import * as Effect from "effect/Effect"
import type { TaskEventDto } from "../api/dtos.js"
import { Tenant } from "./Tenant.js"
import { TaskEventBell } from "./TaskEventBell.js"
import { type EventPage, WorkspaceClient } from "./WorkspaceClient.js"

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
