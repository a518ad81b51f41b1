/**
 * timeSlice (src/lib/eventLoop.ts): a loop of short synchronous steps gives the event loop a
 * turn once per slice, not after every step (what the chunk inserts of an upload use).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { timeSlice } from "../../src/lib/eventLoop.js"

const busy = (ms: number) =>
  Effect.sync(() => {
    const until = performance.now() + ms
    while (performance.now() < until) { /* a synchronous step, like an insert in the driver */ }
  })

/** Runs `steps` steps of `stepMs` each behind one slice; counts the event-loop turns taken meanwhile. */
const turnsDuring = async (steps: number, stepMs: number, sliceMs: number) => {
  let turns = 0
  let done = false
  const tick = () => {
    if (done) return
    turns++
    setImmediate(tick)
  }
  setImmediate(tick)
  await Effect.runPromise(Effect.suspend(() => {
    const slice = timeSlice(sliceMs)
    return Effect.forEach(Array.from({ length: steps }, (_, i) => i), (i) => i === 0 ? busy(stepMs) : Effect.andThen(slice, busy(stepMs)), {
      discard: true
    })
  }))
  done = true
  return turns
}

describe("timeSlice", () => {
  it("takes a turn once the steps have run for a slice, not after every step", async () => {
    // 20 steps of 1 ms with a 5 ms slice: about 4 turns; a turn per step would be 19.
    const turns = await turnsDuring(20, 1, 5)
    expect(turns).toBeGreaterThanOrEqual(2)
    expect(turns).toBeLessThanOrEqual(10)
  })

  it("takes no turn while the loop stays within one slice", async () => {
    expect(await turnsDuring(10, 0, 1_000)).toBe(0)
  })

  it("lets what waits on the event loop run before a long loop ends", async () => {
    const order: Array<string> = []
    setImmediate(() => order.push("waiting"))
    await Effect.runPromise(Effect.suspend(() => {
      const slice = timeSlice(2)
      return Effect.forEach([0, 1, 2, 3, 4, 5], () => Effect.andThen(slice, busy(1)), { discard: true })
    }))
    order.push("loop done")
    expect(order).toEqual(["waiting", "loop done"])
  })
})
