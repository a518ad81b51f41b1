import { describe, expect, it } from "@effect/vitest"
import { jsonText } from "../../src/api/jsonText.js"

describe("jsonText", () => {
  it("is JSON.stringify's text, for objects, arrays and scalars", () => {
    for (const value of [{ a: 1, b: ["x", null], c: { d: "é\u2028" } }, [1, "2", { three: 3 }], "s", 1.5, true, null]) {
      expect(jsonText(value)).toBe(JSON.stringify(value))
    }
    expect(jsonText(undefined)).toBe("null")
  })

  it("stringifies an object once: the size check and the store share one text", () => {
    let calls = 0
    const value = { toJSON: () => (calls++, { n: 1 }) }
    const first = jsonText(value)
    expect(jsonText(value)).toBe(first)
    expect(calls).toBe(1)
    // Another object with equal contents is its own entry.
    expect(jsonText({ toJSON: () => (calls++, { n: 1 }) })).toBe(first)
    expect(calls).toBe(2)
  })
})
