/**
 * Task lifecycle operations of spec §4 ("Task lifecycle"), shared by the HTTP handlers
 * (src/handlers/tasks.ts) and the agent tool server (src/mcp/tools.ts).
 */
import * as Effect from "effect/Effect"
import type { TaskActionDto } from "../api/dtos.js"
import type { UiState } from "../api/resources.js"
import { taskView } from "./taskView.js"
import { ringAfterSignal } from "./TaskEventBell.js"
import { Tenant } from "./Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** The approve/reject signal names of the workspace service, by action type. */
export const ACTION_SIGNAL = { approved: "approve", rejected: "reject" } as const

/** The combined UI state: the task and its next step (none when the task has no runbook). */
export const uiStateOf = (taskId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { task, tenant } = yield* (yield* Tenant).requireTask(taskId)
    const next = yield* workspace.getNextStep(tenant.id, task.id).pipe(
      Effect.catchTag("NotFound", () => Effect.succeed({ step: null, steps: [] }))
    )
    const ui: UiState = { task: taskView(task), step: next.step, steps: next.steps }
    return ui
  })

/**
 * The step a signal names: the client's, when it names one. Otherwise none: the store binds the
 * signal to the step that was current when the request ARRIVED (its arrival time travels with
 * the request, src/http/server/arrival.ts), inside the transaction that records it. Reading the task
 * here and naming its step would not do: a second request read after the first moved the task
 * on would name (and decide) the next step.
 */
export const stepOf = (named: string | undefined) => named === undefined ? {} : { expectedStep: named }

/** How a decision reached the gateway, when not by POST /action itself: a decision link's page. */
export type DecisionVia = "link"

/**
 * type=approved → the approve signal, rejected → reject; `comments` becomes `reason`. Bound to
 * a step: the DTO's `step`, else the one current when the request arrived. `via` marks a
 * decision made through a decision link (recorded in the timeline and the snapshot); every
 * other rule is this path's, whoever calls it.
 */
export const decideTask = (taskId: string, dto: TaskActionDto, via?: DecisionVia) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { tenant } = yield* (yield* Tenant).requireTask(taskId)
    yield* workspace.signal(tenant.id, {
      taskId,
      name: ACTION_SIGNAL[dto.type],
      payload: { ...(dto.comments === undefined ? {} : { reason: dto.comments }), ...(via === undefined ? {} : { via }) },
      ...stepOf(dto.step),
      // A link's person acts from a message and cannot claim there: a step that requires a claim
      // is claimed for them with the decision, if nobody holds it (src/domain/assignment.ts claimFirst).
      ...(via === "link" ? { claimFirst: true } : {})
    })
    yield* ringAfterSignal(taskId)
  })
