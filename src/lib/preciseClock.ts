/**
 * Wall-clock time in milliseconds with sub-millisecond precision (microseconds), monotonic
 * within one process: the system clock is read once, at a tick of Date.now(), and advanced by
 * the monotonic clock. Used to compare when a request arrived with when a task's step became
 * current (src/domain/engine.ts): within one process the comparison is exact; between
 * processes (replicas, a gateway in front of the workspace service) it is as good as their
 * clocks' agreement (one host: some microseconds; NTP between hosts: about a millisecond).
 *
 * Not `performance.timeOrigin`: Node reads the wall clock for it at start apart from the
 * monotonic one, which left processes here 0.1-1.1 ms (once 7.8 ms) ahead of the system
 * clock, each by its own amount; a replica that far ahead stamped a step's start after the
 * arrival of a client's next decision, sent when that step's answer came back, and the
 * decision was bound to the step already decided (test/decisions/clockSkew.pg.test.ts).
 */
import { performance } from "node:perf_hooks"

/**
 * Wall-clock ms minus monotonic ms. Date.now() moves in whole milliseconds: at the moment it
 * moves, the wall clock is exactly its new value. Spins to that moment once per process (under a
 * millisecond), taking a tick seen between two monotonic readings at most 20 µs apart (more tries
 * when the process is descheduled in between, then the narrowest seen).
 */
const systemClockOffset = (): number => {
  let best = { width: Infinity, offset: Date.now() - performance.now() }
  let last = Date.now()
  let lastBefore = performance.now()
  // Until a tick is seen narrowly (the first, unless the process is descheduled), within 50 ticks
  // and 60 ms (a start on a loaded machine is preempted often); a faked Date.now() that stands
  // still gets the plain reading above.
  const giveUpAt = lastBefore + 60
  for (let ticks = 0; ticks < 50 && best.width > 0.02 && lastBefore < giveUpAt;) {
    const before = performance.now()
    const wall = Date.now()
    const after = performance.now()
    if (wall !== last) {
      ticks++
      // The tick came after the last reading of Date.now() (itself after `lastBefore`), before this one.
      if (after - lastBefore < best.width) best = { width: after - lastBefore, offset: wall - (lastBefore + after) / 2 }
    }
    last = wall
    lastBefore = before
  }
  return best.offset
}

const offsetMs = systemClockOffset()

export const preciseNowMs = (): number => Math.round((offsetMs + performance.now()) * 1000) / 1000
