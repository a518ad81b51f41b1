import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { groupEnd, INSERT_GROUP_CHARS, INSERT_GROUP_ROWS, nextGroup } from "../../src/workspace/embedded/insertGroups.js"

describe("a batch's insert groups", () => {
  it("cover every row once, in order; none empty; each within its rows and passing its characters by its last row only", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 300 }), { maxLength: 400 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 2_000 }), (lengths, maxRows, maxChars) => {
        const ends: Array<number> = []
        for (let start = 0; start < lengths.length;) {
          const asked: Array<number> = []
          const end = groupEnd(start, lengths.length, (i) => (asked.push(i), lengths[i]!), maxRows, maxChars)
          // Asked once for each row it takes, in order (nextGroup collects the texts so).
          expect(asked).toEqual(Array.from({ length: end - start }, (_, k) => start + k))
          expect(end).toBeGreaterThan(start)
          const rows = end - start
          const chars = lengths.slice(start, end).reduce((a, b) => a + b, 0)
          expect(rows).toBeLessThanOrEqual(maxRows)
          // Below the bound before its last row; a group cut short of the batch is full by one measure.
          expect(chars - lengths[end - 1]!).toBeLessThan(maxChars)
          if (end < lengths.length) expect(rows === maxRows || chars >= maxChars).toBe(true)
          ends.push(end)
          start = end
        }
        expect(ends.at(-1) ?? 0).toBe(lengths.length)
      }),
      { numRuns: 2_000, seed: 36 }
    )
  })

  it("S5's batch (1,000 events of 2 KB) in two statements, 1,000 small rows in one, 10,000 in ten", () => {
    const groups = (count: number, chars: number) => {
      let n = 0
      for (let start = 0; start < count; n++) start = groupEnd(start, count, () => chars)
      return n
    }
    expect(groups(1_000, 2_000)).toBe(2)
    expect(groups(1_000, 40)).toBe(1)
    expect(groups(10_000, 40)).toBe(10)
    expect(INSERT_GROUP_ROWS * 8).toBeLessThan(32_766)
    expect(groups(3, INSERT_GROUP_CHARS * 2)).toBe(3)
  })

  it("count a row's source reference as well as its data: text carried there does not make one statement of the batch", () => {
    const rows = Array.from({ length: 1_000 }, (_, i) => ({ data: { i }, sourceRef: "r".repeat(30_000) }))
    const sizes: Array<number> = []
    for (let start = 0; start < rows.length;) {
      const texts = nextGroup(rows, start)
      expect(texts.map((t) => t.sourceRef)).toEqual(rows.slice(start, start + texts.length).map((r) => JSON.stringify(r.sourceRef)))
      expect(texts.map((t) => t.data)).toEqual(rows.slice(start, start + texts.length).map((r) => JSON.stringify(r.data)))
      sizes.push(texts.length)
      start += texts.length
    }
    // 30 KB a row: 35 rows reach 1 MiB.
    expect(Math.max(...sizes)).toBe(35)
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1_000)
    // No source reference: stored as NULL, not "null".
    expect(nextGroup([{ data: { a: 1 } }], 0)).toEqual([{ data: "{\"a\":1}", sourceRef: null }])
  })
})
