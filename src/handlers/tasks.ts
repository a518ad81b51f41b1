import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { decideTask, stepOf, uiStateOf } from "../services/tasks.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

const ok = { ok: true } as const

// getUi and action are shared with the agent tool server (src/mcp): ../services/tasks.ts.
export const TasksLive = ParsedPayload.group(GatewayApi, "tasks", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant

    return handlers
      .handle("getUi", ({ params }) => uiStateOf(params.taskId))
      .handle("getSnapshots", ({ params }) =>
        Effect.flatMap(tenants.requireTask(params.taskId), ({ task, tenant }) => workspace.getSnapshots(tenant.id, task.id)))
      // Both bound to a step: the client's `step`, else the one current when the request arrived
      // (the store compares): a retry or a second click then cannot decide the next step.
      .handle("action", ({ params, payload }) => decideTask(params.taskId, payload).pipe(Effect.as(ok)))
      .handle("rowAction", ({ params, payload }) =>
        Effect.flatMap(tenants.requireTask(params.taskId), ({ tenant }) => {
          const { step, ...action } = payload
          return workspace.signal(tenant.id, {
            taskId: params.taskId,
            name: "user_action",
            payload: { kind: "row_action", ...action },
            ...stepOf(step)
          })
        }).pipe(Effect.as(ok)))
  }))
