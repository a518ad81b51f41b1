import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import type { UiState } from "../api/resources.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../services/WorkspaceClient.js"
import { taskView } from "./taskView.js"

const ok = { ok: true } as const

/** The approve/reject signal names of the workspace service, by action type. */
const ACTION_SIGNAL = { approved: "approve", rejected: "reject" } as const

export const TasksLive = HttpApiBuilder.group(GatewayApi, "tasks", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant

    return handlers
      .handle("getUi", ({ path }) =>
        Effect.gen(function*() {
          const { task, tenant } = yield* tenants.requireTask(path.taskId)
          const next = yield* workspace.getNextStep(tenant.id, task.id).pipe(
            Effect.catchTag("NotFound", () => Effect.succeed({ step: null, steps: [] }))
          )
          const ui: UiState = {
            task: taskView(task),
            step: next.step,
            steps: next.steps
          }
          return ui
        }))
      .handle("getSnapshots", ({ path }) =>
        Effect.flatMap(tenants.requireTask(path.taskId), ({ task, tenant }) => workspace.getSnapshots(tenant.id, task.id)))
      .handle("action", ({ path, payload }) =>
        Effect.flatMap(tenants.requireTask(path.taskId), ({ tenant }) =>
          workspace.signal(tenant.id, {
            taskId: path.taskId,
            name: ACTION_SIGNAL[payload.type],
            payload: payload.comments === undefined ? {} : { reason: payload.comments }
          })).pipe(Effect.as(ok)))
      .handle("rowAction", ({ path, payload }) =>
        Effect.flatMap(tenants.requireTask(path.taskId), ({ tenant }) =>
          workspace.signal(tenant.id, {
            taskId: path.taskId,
            name: "user_action",
            payload: { kind: "row_action", ...payload }
          })).pipe(Effect.as(ok)))
  }))
