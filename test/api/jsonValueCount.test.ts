/**
 * The value count that refuses a body before its parse (src/api/jsonScan.ts countJsonValues,
 * SVC_MAX_JSON_VALUES): exact for every JSON text, whatever its spacing and strings (escaped
 * quotes, commas and brackets inside strings), and it stops once past its bound. The values are
 * counted by the gateway's own parse (src/api/jsonParse.ts): V8's JSON.parse can misread a key
 * written with an escape, merging two members.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseJson } from "../../src/api/jsonParse.js"
import { countJsonValues } from "../../src/api/jsonScan.js"

/** Values of a parsed JSON value: itself and, for a container, its elements' (keys not counted). */
const valuesOf = (v: unknown): number =>
  v !== null && typeof v === "object" ? 1 + Object.values(v as object).reduce((n: number, x) => n + valuesOf(x), 0) : 1

/** JSON text with whitespace added around every structural byte outside strings. */
const spaced = (text: string, spaces: ReadonlyArray<string>) => {
  let out = ""
  let k = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (inString) {
      out += c
      if (c === "\\") out += text[++i]
      else if (c === "\"") inString = false
      continue
    }
    if (c === "\"") inString = true
    out += c
    if ("{}[],:".includes(c)) out += spaces[k++ % spaces.length]
  }
  return out
}

const awkwardString = fc.constantFrom("", "a,b", "[{", "}]", "\"", "\\", "\\\"", "x\\\\", ",,,", "é,ü", "\u{1F600}")
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 3 }),
    awkwardString,
    fc.array(tie("v"), { maxLength: 5 }),
    fc.dictionary(awkwardString, tie("v"), { maxKeys: 4 })
  )
})).v

describe("countJsonValues", () => {
  it("counts exactly the values JSON.parse makes, whatever the spacing and the strings", () => {
    fc.assert(fc.property(value, fc.array(fc.constantFrom("", " ", "\n", "\t", "\r\n  "), { minLength: 1, maxLength: 4 }), (v, spaces) => {
      const text = spaced(JSON.stringify(v) ?? "null", spaces)
      expect(countJsonValues(Buffer.from(text), Number.MAX_SAFE_INTEGER), text).toBe(valuesOf(parseJson(text)))
    }), { numRuns: 2_000 })
  })

  it("stops once past its bound, saying so", () => {
    const body = Buffer.from(`[${Array(100_000).fill("{}").join(",")}]`)
    expect(countJsonValues(body, Number.MAX_SAFE_INTEGER)).toBe(100_001)
    expect(countJsonValues(body, 1_000)).toBe(1_001)
    expect(countJsonValues(Buffer.from("[1,2]"), 3)).toBe(3)
  })
})
