/**
 * A full `npm run bench` rewrites bench/RESULTS.md: the sections written by hand from the
 * experiments (raw uploads, memory per cell, as shipped) are carried over, not lost.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { handSections, withHandSections } from "../../bench/lib/handSections.js"

describe("bench/RESULTS.md's hand-written sections", () => {
  it("are found in the committed file and kept when the generated part is rewritten", () => {
    const committed = readFileSync(new URL("../../bench/RESULTS.md", import.meta.url), "utf8")
    const sections = handSections(committed)
    expect(sections.map((s) => /^<!-- ([^:]+):/.exec(s)![1])).toEqual(["Raw uploads", "Memory per cell", "As shipped"])
    const rewritten = withHandSections("# Benchmarks\n\nnew table\n", sections)
    for (const section of sections) expect(rewritten).toContain(section)
    // Kept once: a rewrite that already holds them does not repeat them.
    expect(withHandSections(rewritten, sections)).toBe(rewritten)
    // S8's generated section is not one of them.
    expect(sections.some((s) => s.includes("<!-- S8"))).toBe(false)
  })
})
