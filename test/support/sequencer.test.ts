/**
 * The order files start in (./sequencer.ts): longest first by the results cache, else by the
 * committed durations of a clean-clone run; unknown files first, last run's failures before all.
 */
import { describe, expect, it } from "vitest"
import type { TestSpecification } from "vitest/node"
import { committed, LongestFirst } from "./sequencer.js"

const ROOT = "/repo"
const spec = (file: string) => ({ moduleId: `${ROOT}/${file}`, project: { name: "", config: { root: ROOT } } }) as unknown as TestSpecification

const sorter = (cache: Record<string, { failed: boolean; duration: number }>) =>
  new LongestFirst({
    cache: { getTestSpecificationResult: (s: TestSpecification) => cache[s.moduleId.slice(ROOT.length + 1)] }
  } as never)

const names = (specs: ReadonlyArray<TestSpecification>) => specs.map((s) => s.moduleId.slice(ROOT.length + 1))

describe("the order test files start in", () => {
  it("a clean clone (no cache): the committed durations, longest first, a file the list does not know before all", async () => {
    const known = Object.keys(committed)
    expect(known.length).toBeGreaterThan(100)
    const longest = known[0]!
    const shortest = known.at(-1)!
    const middle = known[Math.floor(known.length / 2)]!
    const order = await sorter({}).sort([spec(shortest), spec(middle), spec("test/new/unknown.test.ts"), spec(longest)])
    expect(names(order)).toEqual(["test/new/unknown.test.ts", longest, middle, shortest])
    // The committed list is of the suite's files, longest first: drainRounds leads it.
    expect(committed[longest]).toBeGreaterThanOrEqual(committed[middle]!)
  })

  it("the cache's durations win over the committed ones; its failures start first", async () => {
    const [a, b, c] = Object.keys(committed).slice(0, 3) as [string, string, string]
    const order = await sorter({
      [a]: { failed: false, duration: 10 },
      [b]: { failed: true, duration: 5 },
      [c]: { failed: false, duration: 999_999 }
    }).sort([spec(a), spec(b), spec(c)])
    expect(names(order)).toEqual([b, c, a])
  })
})
