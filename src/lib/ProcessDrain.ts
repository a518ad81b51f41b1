/**
 * The process's drain as its readers see it (readiness, event streams): whether it has begun,
 * and a call when it does. The drain itself (src/http/server/Drain.ts) is the HTTP server kit's; this
 * tag lets what only reads it stay clear of HTTP. Optional: without it nothing drains.
 */
import * as Context from "effect/Context"

export interface DrainSignal {
  /** True once a drain has begun (a signal arrived). */
  readonly draining: boolean
  /** Calls `listener` once when the drain begins; returns its unsubscribe. */
  onDrain(listener: () => void): () => void
}

export class ProcessDrain extends Context.Service<ProcessDrain, DrainSignal>()("lib/ProcessDrain") {}
