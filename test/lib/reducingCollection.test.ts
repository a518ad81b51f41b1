/**
 * The collection after start (src/lib/reducingCollection.ts) asks V8 for its memory-reducing flavor:
 * a plain full collection leaves start-up's sparse old-generation pages committed (about 4.5 MB
 * of an idle cell's private memory, bench/RESULTS.md).
 */
import { afterEach, describe, expect, it, vi } from "vitest"
import { collectStartupGarbage } from "../../src/lib/reducingCollection.js"

describe("collectStartupGarbage", () => {
  afterEach(() => {
    vi.unstubAllGlobals()
  })

  it("runs one synchronous last-resort (memory-reducing) major collection", () => {
    const calls: Array<unknown> = []
    expect(collectStartupGarbage((options) => calls.push(options))).toBe(true)
    expect(calls).toEqual([{ type: "major", execution: "sync", flavor: "last-resort" }])
  })

  it("does nothing without --expose-gc", () => {
    vi.stubGlobal("gc", undefined)
    expect(collectStartupGarbage()).toBe(false)
  })
})
