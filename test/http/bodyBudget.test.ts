/**
 * The accounting behind SVC_MAX_BODY_BYTES_IN_FLIGHT (src/http/server/BodyBudget.ts): first come, first
 * served; a waiter is admitted when room is given back, or times out; one that leaves gives up
 * its place; a body larger than the whole budget is admitted alone.
 */
import { describe, expect, it } from "vitest"
import { BodyBudget } from "../../src/http/server/BodyBudget.js"

const track = () => {
  const events: Array<string> = []
  return { events, granted: (n: string) => () => events.push(`${n} granted`), timedOut: (n: string) => () => events.push(`${n} timed out`) }
}

describe("BodyBudget", () => {
  it("admits while bytes fit, queues the rest in order, admits them as bytes are given back", () => {
    const budget = new BodyBudget(100)
    const t = track()
    budget.take(60, 10_000, t.granted("a"), t.timedOut("a"))
    budget.take(50, 10_000, t.granted("b"), t.timedOut("b"))
    // c would fit (60 + 30), but b waits before it.
    budget.take(30, 10_000, t.granted("c"), t.timedOut("c"))
    expect(t.events).toEqual(["a granted"])
    expect(budget.tryTake(10)).toBe(false)
    expect(budget.tryTake(10, true)).toBe(true) // the next chunk of an admitted body
    budget.release(70)
    expect(t.events).toEqual(["a granted", "b granted", "c granted"])
    expect(budget.inFlight).toBe(80)
  })

  it("a waiter times out; one that leaves lets those behind it in", async () => {
    const budget = new BodyBudget(100)
    const t = track()
    budget.take(90, 10_000, t.granted("a"), t.timedOut("a"))
    budget.take(50, 20, t.granted("b"), t.timedOut("b"))
    const cancel = budget.take(50, 10_000, t.granted("c"), t.timedOut("c"))
    budget.take(5, 10_000, t.granted("d"), t.timedOut("d"))
    await new Promise((r) => setTimeout(r, 60))
    expect(t.events).toEqual(["a granted", "b timed out"])
    cancel()
    expect(t.events).toEqual(["a granted", "b timed out", "d granted"])
    expect(budget.inFlight).toBe(95)
  })

  it("a body larger than the whole budget is admitted when nothing else is held", () => {
    const budget = new BodyBudget(100)
    const t = track()
    budget.take(10, 10_000, t.granted("a"), t.timedOut("a"))
    budget.take(500, 10_000, t.granted("big"), t.timedOut("big"))
    expect(t.events).toEqual(["a granted"])
    budget.release(10)
    expect(t.events).toEqual(["a granted", "big granted"])
    budget.release(500)
    expect(budget.inFlight).toBe(0)
  })
})

describe("BodyBudget.force", () => {
  it("takes bytes over the budget (a small body), given back the same way", () => {
    const budget = new BodyBudget(100)
    const t = track()
    budget.take(100, 10_000, t.granted("a"), t.timedOut("a"))
    budget.force(10)
    expect(budget.inFlight).toBe(110)
    budget.take(20, 10_000, t.granted("b"), t.timedOut("b"))
    budget.release(100)
    expect(t.events).toEqual(["a granted", "b granted"])
    budget.release(10)
    budget.release(20)
    expect(budget.inFlight).toBe(0)
  })
})
