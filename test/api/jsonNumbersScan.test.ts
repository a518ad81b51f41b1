/**
 * The byte scan for number literals a float cannot keep (src/api/jsonNumbers.ts) runs on every
 * body, before routing, so its cost is paid by any request up to SVC_MAX_BODY_BYTES.
 *
 * Its shortcuts skip the exact-value check for literals that cannot leave the float range or round
 * to 0, and must never pass one the check would refuse: generated literals around their bounds (15
 * digits, exponents around 290, integers of 16 digits up to 2^53 - 1) are scanned alone and compared
 * with the check itself.
 *
 * Its cost: each literal it must look at was made a string with `String.fromCharCode(...subarray)`,
 * whose spread builds an argument list per literal: a 28 MB body of 18-digit integers held the event
 * loop 1.5 s in the scan alone, seventeen times a warm JSON.parse of the same body (83 ms); now about
 * five times. Measured against the parse of the same body in this process, so a slower machine moves
 * both; the bound (ten parses) sits between the two.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { firstInexactNumber, isExactNumberLiteral } from "../../src/api/jsonNumbers.js"

const timed = (f: () => unknown): number => {
  const t = performance.now()
  f()
  return performance.now() - t
}


const literal = fc.tuple(
  fc.constantFrom("", "-"),
  fc.stringMatching(/^[1-9][0-9]{0,19}$/),
  fc.option(fc.stringMatching(/^[0-9]{1,5}$/), { nil: undefined }),
  fc.constantFrom("e", "E", "e+", "e-", "E-"),
  fc.integer({ min: 280, max: 330 })
).map(([sign, int, frac, e, power]) => `${sign}${int}${frac === undefined ? "" : `.${frac}`}${e}${power}`)

/** Integers of 15 to 17 digits, many of them near 2^53 (the 16-digit shortcut's bound). */
const integer = fc.tuple(
  fc.constantFrom("", "-"),
  fc.oneof(
    fc.bigInt({ min: 10n ** 14n, max: 10n ** 17n - 1n }),
    fc.bigInt({ min: 2n ** 53n - 1000n, max: 2n ** 53n + 1000n })
  )
).map(([sign, n]) => `${sign}${n}`)

describe("the number scan's shortcut", () => {
  it("refuses exactly what the exact-value check refuses, near its bounds", () => {
    fc.assert(fc.property(literal, (l) => {
      const found = firstInexactNumber(Buffer.from(`{"a":[${l}]}`))
      expect(found, l).toBe(isExactNumberLiteral(l) ? undefined : l)
    }), { numRuns: 3000 })
  })

  it("passes 16-digit integers up to 2^53 - 1 and refuses what the check refuses past it", () => {
    fc.assert(fc.property(integer, (l) => {
      const found = firstInexactNumber(Buffer.from(`[1,${l},2]`))
      expect(found, l).toBe(isExactNumberLiteral(l) ? undefined : l)
    }), { numRuns: 3000 })
  })
})

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
