/**
 * The drain's list of answers in progress (src/http/server/InFlight.ts) holds what a Set would:
 * generated runs of adds and removals (a removal called twice, out of order, during a walk) leave
 * the same values as a Set given the same operations, newest first, and the same size.
 */
import { describe, expect, it } from "vitest"
import { InFlight } from "../../src/http/server/InFlight.js"
import * as fc from "../fixtures/arbitrary.js"

describe("InFlight", () => {
  it("holds what a Set holds, newest first, for generated adds and removals", () => {
    const step = fc.tuple(fc.boolean(), fc.nat())
    fc.assertProperty(fc.array(step, { maxLength: 200 }), (steps) => {
      const list = new InFlight<number>()
      const model = new Set<number>()
      const removals: Array<{ value: number; remove: () => void }> = []
      let next = 0
      for (const [adding, pick] of steps) {
        if (adding || removals.length === 0) {
          const value = next++
          removals.push({ value, remove: list.add(value) })
          model.add(value)
        } else {
          // Any earlier removal, some of them a second time.
          const { value, remove } = removals[pick % removals.length]!
          remove()
          model.delete(value)
        }
        if (list.size !== model.size) return false
      }
      const expected = [...model].reverse()
      return JSON.stringify(list.values()) === JSON.stringify(expected)
    }, { numRuns: 500, seed: 36 })
  })

  it("a value removed while the list is walked is still in that walk, not in the next", () => {
    const list = new InFlight<string>()
    const removeA = list.add("a")
    list.add("b")
    const removeC = list.add("c")
    const seen: Array<string> = []
    for (const value of list.values()) {
      seen.push(value)
      if (value === "c") {
        removeA()
        removeC()
      }
    }
    expect(seen).toEqual(["c", "b", "a"])
    expect(list.values()).toEqual(["b"])
    expect(list.size).toBe(1)
  })
})
