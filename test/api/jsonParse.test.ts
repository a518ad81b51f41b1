/**
 * parseJson (src/api/jsonParse.ts): JSON.parse's value, with keys written with an escape read as
 * written after the transitions V8 mistakes them for exist.
 */
import { randomUUID } from "node:crypto"
import { describe, expect, it } from "vitest"
import { parseJson } from "../../src/api/jsonParse.js"

describe("parseJson", () => {
  it("reads escaped keys as written where JSON.parse, after a backslash key, does not", () => {
    // Keys of this run's own: no other parse in this process has made transitions from them.
    const k1 = `k${randomUUID()}`
    const k2 = `k${randomUUID()}`
    JSON.parse(`{"${k1}":[],"\\\\":0}`)
    JSON.parse(`{"${k2}":[],"\\\\":0}`)
    // JSON.parse itself then reads the next key as a backslash in a fresh process (not asserted: whether
    // it does depends on what else the process has parsed; test/http/escapedKeys shows it does).
    expect(Object.keys(parseJson(`{"${k1}":1,"\\"":2}`) as object)).toEqual([k1, "\""])
    expect(Object.keys(parseJson(`{"${k2}":1,"\\t":2}`) as object)).toEqual([k2, "\t"])
    expect(parseJson(`[{"${k1}":1,"\\"":[{"${k1}":1,"\\u0022":9}]}]`)).toEqual([{ [k1]: 1, "\"": [{ [k1]: 1, "\"": 9 }] }])
  })

  it("keeps JSON.parse's order, duplicates, own __proto__ and errors", () => {
    const order = parseJson(String.raw`{"b":1,"\u0031":2,"a":3,"0":4,"\u0062":5}`) as Record<string, unknown>
    expect(Object.entries(order)).toEqual([["0", 4], ["1", 2], ["b", 5], ["a", 3]])
    const proto = parseJson(String.raw`{"__pro\u0074o__":{"x":1}}`) as object
    expect(Object.getPrototypeOf(proto)).toBe(Object.prototype)
    expect(Object.keys(proto)).toEqual(["__proto__"])
    expect(parseJson(String.raw`{"s":"a\"b\\","n":[1,"\\"]}`)).toEqual({ s: "a\"b\\", n: [1, "\\"] })
    expect(() => parseJson(String.raw`{"\"":}`)).toThrow(SyntaxError)
  })

  it("passes each number's source to a reviver under an escaped key", () => {
    const sources: Array<string | undefined> = []
    parseJson(String.raw`{"k1":1,"\"":9007199254740993}`, (_k, v, context) => {
      if (typeof v === "number") sources.push(context?.source)
      return v
    })
    expect(sources).toEqual(["1", "9007199254740993"])
  })
})

describe("parseJson on text that is no JSON", () => {
  it("throws JSON.parse's own error, also where the bad part is inside an escaped key", () => {
    for (const text of ["{\"a\\\"\u0001\":1}", String.raw`{"a\x":1}`, String.raw`{"\"":1`, String.raw`{"\"" 1}`]) {
      let expected: unknown
      try {
        JSON.parse(text)
      } catch (e) {
        expected = (e as Error).message
      }
      expect(expected, text).toBeDefined()
      expect(() => parseJson(text), text).toThrow(expected as string)
    }
  })
})

describe("the placeholder keys", () => {
  it("never take the place of a key the text holds itself, whatever it is named", () => {
    const text = String.raw`{"🔑:0":"mine","🔑🔑:0":"mine too","\"":"escaped","a":{"\t":1,"🔑:1":2}}`
    expect(parseJson(text)).toEqual({ "🔑:0": "mine", "🔑🔑:0": "mine too", "\"": "escaped", a: { "\t": 1, "🔑:1": 2 } })
    expect(Object.keys(parseJson(text) as object)).toEqual(["🔑:0", "🔑🔑:0", "\"", "a"])
  })
})
