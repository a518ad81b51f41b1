/**
 * Wall-clock time in milliseconds with sub-millisecond precision (microseconds), monotonic
 * within one process: the time origin is read once from the wall clock and advanced by the
 * monotonic clock. Used to compare when a request arrived with when a task's step became
 * current (src/domain/engine.ts): within one process the comparison is exact; between
 * replicas it is as good as their clocks' agreement (NTP keeps it to about a millisecond).
 */
import { performance } from "node:perf_hooks"

export const preciseNowMs = (): number => Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000
