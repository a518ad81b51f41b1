/**
 * The byte scan for number literals a float cannot keep (src/api/jsonNumbers.ts) skips the
 * exact-value check for literals that cannot leave the float range or round to 0: that shortcut
 * must never pass one the check would refuse. Generated literals around its bounds (15 digits,
 * exponents around 290) are scanned alone and compared with the check itself.
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

describe("the number scan's shortcut", () => {
  it("refuses exactly what the exact-value check refuses, near its bounds", () => {
    fc.assert(fc.property(literal, (l) => {
      const found = firstInexactNumber(Buffer.from(`{"a":[${l}]}`))
      expect(found, l).toBe(isExactNumberLiteral(l) ? undefined : l)
    }), { numRuns: 3000 })
  })
})
