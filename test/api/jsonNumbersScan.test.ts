/**
 * The byte scan for inexact number literals (src/api/jsonNumbers.ts firstInexactNumber) runs on
 * every body, before routing, so its cost is paid by any request up to SVC_MAX_BODY_BYTES. Each
 * literal it must look at (an integer of 16 digits or more, any literal with an exponent) was
 * made a string with `String.fromCharCode(...subarray)`, whose spread builds an argument list
 * per literal: a 28 MB body of 18-digit integers held the event loop 1.5 s in the scan alone,
 * seventeen times a warm JSON.parse of the same body (83 ms); now about five times. Measured
 * against the parse of the same body in this process, so a slower machine moves both; the bound
 * (ten parses) sits between the two.
 */
import { describe, expect, it } from "vitest"
import { firstInexactNumber } from "../../src/api/jsonNumbers.js"

const timed = (f: () => unknown): number => {
  const t = performance.now()
  f()
  return performance.now() - t
}

describe("the inexact-number scan's cost", () => {
  it("a body of many literals it must read costs less than ten parses of the body", () => {
    const text = `[${Array.from({ length: 1_500_000 }, () => "100000000000000000").join(",")}]`
    const bytes = Buffer.from(text)
    // Warm both up, then the best of three each (a GC pause in one run says nothing).
    JSON.parse(text)
    expect(firstInexactNumber(bytes)).toBeUndefined()
    const parse = Math.min(...[0, 1, 2].map(() => timed(() => JSON.parse(text))))
    const scan = Math.min(...[0, 1, 2].map(() => timed(() => firstInexactNumber(bytes))))
    expect(scan, `scan ${scan.toFixed(0)} ms, parse ${parse.toFixed(0)} ms`).toBeLessThan(10 * parse)
  }, 60_000)
})
