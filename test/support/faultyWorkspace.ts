/**
 * Faults for in-process tests: a wrapper over a WorkspaceClientService (the embedded store in
 * practice) that counts every call by method and fails it first when a fault says so. It holds
 * no rule of the port: whatever it lets through is the wrapped service's own answer.
 */
import * as Effect from "effect/Effect"
import type { NotFound, UpstreamError } from "../../src/api/errors.js"
import type { WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import type { Workspace } from "../../src/upstream/model.js"

/** Return an error to fail that call, undefined to let it through. */
export interface Faults {
  /** getNextStep fails with it; getNextSteps answers null for that task (each task answers on its own). */
  nextStep?: (taskId: string) => UpstreamError | NotFound | undefined
  runbook?: (workflowId: string) => UpstreamError | NotFound | undefined
  all?: () => UpstreamError | undefined
  /** Milliseconds every getNextStep / getNextSteps waits first (benchmarks: a slow upstream lookup). */
  nextStepDelayMs?: number
}

export interface FaultyWorkspace extends WorkspaceClientService {
  readonly faults: Faults
  /** Calls so far, by method name. */
  readonly calls: Map<string, number>
}

type AnyEffect = Effect.Effect<unknown, unknown>
type Method = (...args: Array<unknown>) => AnyEffect

/**
 * `service` with faults: every function-valued property wrapped, everything else copied. The
 * result is a plain object, so a test may still swap one of its methods for its own.
 */
export const withFaults = <S extends WorkspaceClientService>(service: S): S & FaultyWorkspace => {
  const faults: Faults = {}
  const calls = new Map<string, number>()
  const delay = Effect.suspend(() => faults.nextStepDelayMs === undefined ? Effect.void : Effect.sleep(faults.nextStepDelayMs))

  const wrap = (name: string, method: Method): Method => (...args) =>
    Effect.suspend((): AnyEffect => {
      calls.set(name, (calls.get(name) ?? 0) + 1)
      const fault = faults.all?.()
      if (fault !== undefined) return Effect.fail(fault)
      switch (name) {
        case "getNextStep": {
          const failed = faults.nextStep?.(args[1] as string)
          return failed !== undefined ? Effect.fail(failed) : Effect.andThen(delay, method(...args))
        }
        case "getNextSteps": {
          const faulted = new Set((args[1] as ReadonlyArray<string>).filter((id) => faults.nextStep?.(id) !== undefined))
          return Effect.andThen(delay, Effect.map(method(...args), (answers) =>
            (answers as ReadonlyArray<Workspace.NextStepOf>).map((a) => faulted.has(a.taskId) ? { taskId: a.taskId, nextStep: null } : a)))
        }
        case "getRunbook": {
          const failed = faults.runbook?.(args[1] as string)
          return failed !== undefined ? Effect.fail(failed) : method(...args)
        }
        default:
          return method(...args)
      }
    })

  const wrapped: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(service)) {
    // Without the store's own board the task list is composed from the wrapped calls
    // (src/upstream/taskBoard.ts), so their faults, delays and counts apply to it.
    if (name === "listTaskBoard") continue
    wrapped[name] = typeof value === "function" ? wrap(name, (value as Method).bind(service)) : value
  }
  return Object.assign(wrapped, { faults, calls }) as unknown as S & FaultyWorkspace
}
