/**
 * Data records' ids (src/lib/timeOrderedId.ts): UUIDv7 whose first 48 bits are the time they
 * were made, unique across the random pool's refills, each after the one made before it.
 */
import { describe, expect, it } from "vitest"
import { timeOrderedUuid } from "../../src/lib/timeOrderedId.js"

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const msOf = (id: string) => parseInt(id.replace(/-/g, "").slice(0, 12), 16)

describe("time-ordered ids", () => {
  it("are UUIDv7 of the time they were made, unique past many refills of the pool", () => {
    const before = Date.now()
    const ids = Array.from({ length: 20_000 }, () => timeOrderedUuid())
    const after = Date.now()
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) {
      expect(id).toMatch(V7)
      expect(msOf(id)).toBeGreaterThanOrEqual(before)
      expect(msOf(id)).toBeLessThanOrEqual(after)
    }
    // The random part is random: no two ids share their last 12 hex digits either.
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length)
  })

  it("each id sorts after the one made before it, within a millisecond too", () => {
    const ids = Array.from({ length: 20_000 }, () => timeOrderedUuid())
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true)
  })

  it("an id made in a later millisecond sorts after every earlier one", async () => {
    const first = Array.from({ length: 500 }, () => timeOrderedUuid())
    await new Promise((r) => setTimeout(r, 3))
    const second = Array.from({ length: 500 }, () => timeOrderedUuid())
    expect([...first].sort().at(-1)! < [...second].sort()[0]!).toBe(true)
  })
})
