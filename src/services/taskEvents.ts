/**
 * The task event timeline of spec §4 ("Task events"), shared by the HTTP handlers
 * (src/handlers/events.ts) and the agent tool server (src/mcp/tools.ts). The events key check
 * of POST /v1/tasks/:taskId/events stays with the HTTP handler: agents authenticate with their
 * own key at the tool server instead.
 */
import * as Effect from "effect/Effect"
import type { TaskEventDto } from "../api/dtos.js"
import { Tenant } from "./Tenant.js"
import { WorkspaceClient } from "./WorkspaceClient.js"

export const appendTaskEvent = (taskId: string, dto: TaskEventDto) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    return yield* workspace.appendEvent(tenant.id, taskId, dto)
  })

export const listTaskEvents = (taskId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    return yield* workspace.listEvents(tenant.id, taskId)
  })
