/**
 * Steps assigned to agents: a runbook step's `agentId` (src/upstream/model.ts) names the one
 * registered agent that may complete it through the tool server. People on /v1 are bound by it
 * too when an identity is configured (src/domain/assignment.ts: they take an agent's step over
 * by claiming it with override).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"
import type { Agent } from "../upstream/registry.js"
import { STEP_SIGNALS } from "../domain/engine.js"
import { Forbidden } from "./errors.js"

export interface CurrentStep {
  readonly stepId: string
  /** The agent the step is assigned to, if any. */
  readonly agentId: string | undefined
}

/** The task's current step and its assignment; None for a finished task or one without a runbook. */
export const currentStepOf = (taskId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const { task, tenant } = yield* (yield* Tenant).requireTask(taskId)
    if (task.currentStep === null) return Option.none<CurrentStep>()
    const runbook = yield* workspace.getRunbook(tenant.id, task.workflowId).pipe(
      Effect.map(Option.some),
      Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
    )
    const step = Option.flatMap(runbook, (r) => Option.fromNullishOr(r.steps.find((s) => s.id === task.currentStep)))
    return Option.some<CurrentStep>({
      stepId: task.currentStep,
      agentId: Option.getOrUndefined(Option.flatMap(step, (s) => Option.fromNullishOr(s.agentId)))
    })
  })

/**
 * Before `agent` sends signal `signalName` to task `taskId`: a signal that decides a step
 * (approve, reject, file_submitted) may not go to a step assigned to another agent (403).
 * Returns the current step checked (to bind the write to it where the write takes a step).
 */
export const requireMayComplete = (agent: Agent, taskId: string, signalName: string) =>
  Effect.gen(function*() {
    if (!STEP_SIGNALS.has(signalName)) return Option.none<CurrentStep>()
    const current = yield* currentStepOf(taskId)
    if (Option.isSome(current) && current.value.agentId !== undefined && current.value.agentId !== agent.id) {
      return yield* Effect.fail(
        new Forbidden({
          message: `Step "${current.value.stepId}" of task ${taskId} is assigned to agent ${current.value.agentId}; ` +
            `agent ${agent.id} cannot complete it`
        })
      )
    }
    return current
  })
