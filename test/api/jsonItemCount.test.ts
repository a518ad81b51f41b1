/**
 * The item count that refuses a body before its parse (src/api/jsonScan.ts countJsonItems,
 * SVC_MAX_JSON_ITEMS): values and keys, a key written with an escape counting ESCAPED_KEY_WEIGHT;
 * exact for every JSON text, whatever its spacing and strings (escaped quotes, commas, brackets
 * and colons inside strings and keys), and it stops once past its bound. The values are
 * counted by the gateway's own parse (src/api/jsonParse.ts): V8's JSON.parse can misread a key
 * written with an escape, merging two members.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseJson } from "../../src/api/jsonParse.js"
import { countJsonItems, ESCAPED_KEY_WEIGHT } from "../../src/api/jsonScan.js"

/**
 * Items of a parsed JSON value: itself and, for a container, its elements' and its keys (a key
 * that JSON.stringify, which wrote the text, escapes counts ESCAPED_KEY_WEIGHT).
 */
const itemsOf = (v: unknown): number => {
  if (v === null || typeof v !== "object") return 1
  if (Array.isArray(v)) return 1 + v.reduce((n: number, x) => n + itemsOf(x), 0)
  return 1 + Object.entries(v).reduce((n: number, [k, x]) => n + (JSON.stringify(k).includes("\\") ? ESCAPED_KEY_WEIGHT : 1) + itemsOf(x), 0)
}

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

const awkwardString = fc.constantFrom("", "a,b", "[{", "}]", "\"", "\\", "\\\"", "x\\\\", ",,,", "é,ü", "\u{1F600}", "a\":", ":", "\n", "\u0001")
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.jsonValue({ maxDepth: 3 }),
    awkwardString,
    fc.array(tie("v"), { maxLength: 5 }),
    fc.dictionary(awkwardString, tie("v"), { maxKeys: 4 })
  )
})).v

describe("countJsonItems", () => {
  it("counts exactly the values and keys the parse makes, whatever the spacing and the strings", () => {
    fc.assert(fc.property(value, fc.array(fc.constantFrom("", " ", "\n", "\t", "\r\n  "), { minLength: 1, maxLength: 4 }), (v, spaces) => {
      const text = spaced(JSON.stringify(v) ?? "null", spaces)
      expect(countJsonItems(Buffer.from(text), Number.MAX_SAFE_INTEGER), text).toBe(itemsOf(parseJson(text)))
    }), { numRuns: 2_000 })
  })

  it("stops once past its bound, saying so", () => {
    const body = Buffer.from(`[${Array(100_000).fill("{}").join(",")}]`)
    expect(countJsonItems(body, Number.MAX_SAFE_INTEGER)).toBe(100_001)
    expect(countJsonItems(body, 1_000)).toBe(1_001)
    expect(countJsonItems(Buffer.from("[1,2]"), 3)).toBe(3)
    // Keys as written: a duplicate each time, an escaped one ESCAPED_KEY_WEIGHT.
    expect(countJsonItems(Buffer.from(`{"a":1,"a":2}`), 100)).toBe(5)
    expect(countJsonItems(Buffer.from(`{"\\"":1, "\\u0061" : 2}`), 100)).toBe(3 + 2 * ESCAPED_KEY_WEIGHT)
  })
})
