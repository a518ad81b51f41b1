/**
 * The in-process doorbell of task timelines: whoever commits events for a task rings it
 * (the gateway after an append, the embedded store's engine after a delivery, the in-memory
 * workspace), and open event streams of that task (./EventStreams.ts) read what is new.
 * A ring carries no data and may be spurious: listeners re-read the store, which stays the
 * only truth. Writes by other processes ring nothing here; the streams' slow poll finds them.
 *
 * A Context.Reference: one bell per process by default, so the store and the gateway meet
 * without wiring; a test may provide its own.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { rootTaskId } from "../api/ids.js"

export interface TaskEventBellService {
  /** New events may exist for these task ids (the exact ids their events were written under). */
  readonly ring: (taskId: string) => void
  /** Calls `listener` on every ring of `taskId`; returns the unsubscribe. */
  readonly listen: (taskId: string, listener: () => void) => () => void
}

export const makeTaskEventBell = (): TaskEventBellService => {
  const listeners = new Map<string, Set<() => void>>()
  return {
    ring: (taskId) => {
      const set = listeners.get(taskId)
      if (set === undefined) return
      for (const listener of [...set]) {
        try {
          listener()
        } catch {
          // A listener's failure is its own.
        }
      }
    },
    listen: (taskId, listener) => {
      let set = listeners.get(taskId)
      if (set === undefined) listeners.set(taskId, set = new Set())
      set.add(listener)
      return () => {
        set.delete(listener)
        if (set.size === 0 && listeners.get(taskId) === set) listeners.delete(taskId)
      }
    }
  }
}

export class TaskEventBell extends Context.Reference<TaskEventBellService>("services/TaskEventBell", {
  defaultValue: makeTaskEventBell
}) {}

/**
 * After a write that sent a signal to `taskId`: the engine may have written events already (a
 * workspace applies a few signals before it answers), on the root task's timeline. Rung by the
 * gateway, so that streams hear of them even when the engine runs in another process.
 */
export const ringAfterSignal = (taskId: string | undefined): Effect.Effect<void> =>
  taskId === undefined ? Effect.void : Effect.map(TaskEventBell, (bell) => bell.ring(rootTaskId(taskId)))
