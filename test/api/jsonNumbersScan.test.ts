/**
 * The byte scan for number literals a float cannot keep (src/api/jsonNumbers.ts) runs on every
 * body, before routing, so its cost is paid by any request up to SVC_MAX_BODY_BYTES.
 *
 * Its shortcuts skip the exact-value check for literals that cannot leave the float range or round
 * to 0, and must never pass one the check would refuse: generated literals around their bounds (15
 * digits, exponents around 290, integers of 16 digits up to 2^53 - 1) are scanned alone and compared
 * with the check itself.
 *
 * Its cost is measured, not asserted here (a ratio to the parse moved past any bound that would
 * still catch a slow path under a loaded CI): 4 MB bodies of 1e1, 0.5, 12, 1.5e-3 and 16-digit ids
 * scan in 15-21 ms against 11-37 ms for their parse; 18-digit integers, which need the exact-value
 * check, about five parses' time (a spread per literal made it seventeen).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { firstInexactNumber, isExactNumberLiteral } from "../../src/api/jsonNumbers.js"

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
