/**
 * The order files start in (./sequencer.ts): longest first by the results cache, else by the
 * committed durations of a clean-clone run; unknown files first, last run's failures before all.
 */
import { describe, expect, it } from "vitest"
import type { TestSpecification } from "vitest/node"
import { committed, LongestFirst, plan } from "./sequencer.js"

const ROOT = "/repo"
const spec = (file: string) => ({ moduleId: `${ROOT}/${file}`, project: { name: "", config: { root: ROOT } } }) as unknown as TestSpecification

const sorter = (cache: Record<string, { failed: boolean; duration: number }>, maxWorkers = 1) =>
  new LongestFirst({
    cache: { getTestSpecificationResult: (s: TestSpecification) => cache[s.moduleId.slice(ROOT.length + 1)] },
    config: { maxWorkers }
  } as never)

/** Pairs of waiting files that run at the same time when `order` is taken by `workers` workers, as planned. */
const waitingTogether = (order: ReadonlyArray<{ readonly ms: number; readonly waits: boolean }>, workers: number) => {
  let running: Array<{ end: number; waits: boolean }> = []
  let now = 0
  let pairs = 0
  for (const file of order) {
    if (running.length >= workers) {
      running.sort((a, b) => a.end - b.end)
      now = running[0]!.end
      running = running.slice(1)
    }
    if (file.waits) pairs += running.filter((r) => r.waits).length
    running.push({ end: now + file.ms, waits: file.waits })
  }
  return pairs
}

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
    expect(committed[longest]!.ms).toBeGreaterThanOrEqual(committed[middle]!.ms)
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

  it("two workers: a worker freeing beside a file that waits takes the longest file that does not", () => {
    const file = (name: string, ms: number, waits: boolean) => ({ name, ms, waits })
    const files = [file("wait30", 30, true), file("wait25", 25, true), file("busy20", 20, false), file("busy15", 15, false), file("busy10", 10, false)]
    expect(plan(files, 2).map((f) => f.name)).toEqual(["wait30", "busy20", "busy15", "wait25", "busy10"])
    expect(waitingTogether(files, 2)).toBeGreaterThan(0)
    expect(waitingTogether(plan(files, 2), 2)).toBe(0)
    // One worker: longest first, as it was.
    expect(plan(files, 1)).toEqual(files)
  })

  it("the committed list, planned for two workers, runs fewer waiting files together than longest first", async () => {
    const known = Object.keys(committed)
    const longestFirst = known.map((name) => ({ name, ms: committed[name]!.ms, waits: committed[name]!.cpuMs !== undefined && committed[name]!.cpuMs! < committed[name]!.ms / 2 }))
    expect(longestFirst.filter((f) => f.waits).length).toBeGreaterThan(5)
    const order = names(await sorter({}, 2).sort(known.map(spec)))
    const planned = order.map((name) => longestFirst.find((f) => f.name === name)!)
    expect(waitingTogether(planned, 2)).toBeLessThan(waitingTogether(longestFirst, 2))
  })
})
