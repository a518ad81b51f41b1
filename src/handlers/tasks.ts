import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { decideTask, stepOf, uiStateOf } from "../services/tasks.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

const ok = { ok: true } as const

// getUi and action are shared with the agent tool server (src/mcp): ../services/tasks.ts.
export const TasksLive = HttpApiBuilder.group(GatewayApi, "tasks", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant

    return handlers
      .handle("getUi", ({ path }) => uiStateOf(path.taskId))
      .handle("getSnapshots", ({ path }) =>
        Effect.flatMap(tenants.requireTask(path.taskId), ({ task, tenant }) => workspace.getSnapshots(tenant.id, task.id)))
      // Both bound to a step: the client's `step`, else the one current when the request arrived
      // (the store compares): a retry or a second click then cannot decide the next step.
      .handle("action", ({ path, payload }) => decideTask(path.taskId, payload).pipe(Effect.as(ok)))
      .handle("rowAction", ({ path, payload }) =>
        Effect.flatMap(tenants.requireTask(path.taskId), ({ tenant }) => {
          const { step, ...action } = payload
          return workspace.signal(tenant.id, {
            taskId: path.taskId,
            name: "user_action",
            payload: { kind: "row_action", ...action },
            ...stepOf(step)
          })
        }).pipe(Effect.as(ok)))
  }))
