/** sameJsonValue: the same JSON value whatever the order of each object's members; nothing else. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalJsonValue, sameJsonValue } from "../../src/lib/sameJson.js"

/** The value with every object's members in reverse order (arrays keep theirs). */
const reordered = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reordered)
    : v !== null && typeof v === "object"
    ? Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reordered(x)]))
    : v

describe("sameJsonValue", () => {
  it("a value and itself with its members reordered are the same; a value and another are the same exactly when their canonical texts are", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(sameJsonValue(a, reordered(a))).toBe(true)
        const canonical = (v: unknown): string =>
          Array.isArray(v)
            ? `[${v.map(canonical).join(",")}]`
            : v !== null && typeof v === "object"
            ? `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(",")}}`
            : JSON.stringify(v)
        expect(sameJsonValue(a, b)).toBe(canonical(a) === canonical(b))
        // The fingerprint's text: one for every order of the members, another for another value.
        expect(JSON.stringify(canonicalJsonValue(reordered(a)))).toBe(JSON.stringify(canonicalJsonValue(a)))
        expect(JSON.stringify(canonicalJsonValue(a)) === JSON.stringify(canonicalJsonValue(b))).toBe(sameJsonValue(a, b))
      }),
      { numRuns: 500 }
    )
  })

  it("arrays keep their order; a missing member, an extra one or null for absent differs", () => {
    expect(sameJsonValue([1, 2], [2, 1])).toBe(false)
    expect(sameJsonValue({ a: 1 }, { a: 1, b: null })).toBe(false)
    expect(sameJsonValue({ a: null }, { b: null })).toBe(false)
    expect(sameJsonValue({ a: [] }, { a: {} })).toBe(false)
    expect(sameJsonValue(JSON.parse('{"__proto__":1,"x":2}'), JSON.parse('{"x":2,"__proto__":1}'))).toBe(true)
    expect(sameJsonValue(JSON.parse('{"__proto__":1}'), {})).toBe(false)
  })
})
