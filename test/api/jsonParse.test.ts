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

  it("reads a key whose escape is not needed (\\u0061, \\/) as written, and its duplicates as JSON.parse does", () => {
    const k = `k${randomUUID()}`
    JSON.parse(`{"${k}":[],"\\\\":0}`)
    expect(parseJson(String.raw`{"${k}":1,"\u0061":2,"\/":3}`)).toEqual({ [k]: 1, a: 2, "/": 3 })
    // Before: rebuilt in key order, where an integer key comes first: {"1":"first"}.
    const dup = parseJson(String.raw`{"\u0031":"first","1":"last","\u0061":"x","a":"y","\t":1,"\u0009":2}`)
    expect(Object.entries(dup as object)).toEqual([["1", "last"], ["a", "y"], ["\t", 2]])
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

  it("stay apart from keys named like the other prefixes too", () => {
    const text = String.raw`{"🔑:":1,"🔑0:0":2,"🔑1:0":3,"🔑01:x":4,"\"":5,"a":{"\u0074":6,"🔑2:":7}}`
    const value = parseJson(text)
    expect(value).toEqual({ "🔑:": 1, "🔑0:0": 2, "🔑1:0": 3, "🔑01:x": 4, "\"": 5, a: { t: 6, "🔑2:": 7 } })
    expect(Object.keys(value as object)).toEqual(["🔑:", "🔑0:0", "🔑1:0", "🔑01:x", "\"", "a"])
  })

  it("are chosen in time linear in the text, whatever run of key icons it holds", () => {
    // Before: the prefix grew an icon per look at the whole text, 50,000 looks here (200 KB): 15 s.
    const text = String.raw`{"a":"\n${"\u{1F511}".repeat(50_000)}:","\t":1}`
    const t = performance.now()
    const value = parseJson(text) as Record<string, unknown>
    const ms = performance.now() - t
    expect(Object.keys(value)).toEqual(["a", "\t"])
    // An absolute bound a fifth of the quadratic time: a ratio to a 1 ms parse failed on a cold JIT (132 ms).
    expect(ms, `parseJson ${ms.toFixed(0)} ms`).toBeLessThan(3_000)
  })
})

describe("parseJson's time on a text with escaped keys", () => {
  /** The fastest of three runs, in ms. */
  const fastest = (f: () => unknown) => {
    let best = Infinity
    for (let i = 0; i < 3; i++) {
      const t = performance.now()
      f()
      best = Math.min(best, performance.now() - t)
    }
    return best
  }

  it("stays near JSON.parse's where one key is written often or beside a large array", () => {
    // Before: each occurrence had a placeholder of its own (an object's keys each its own, 33 times
    // the parse) and the walk made a tuple per value (20 times the parse beside 2,000,000 numbers).
    for (const text of [
      `[${Array.from({ length: 600_000 }, () => String.raw`{"\u0061":1}`).join(",")}]`,
      String.raw`{"\t":[${Array.from({ length: 2_000_000 }, () => "1").join(",")}]}`
    ]) {
      const parse = fastest(() => JSON.parse(text))
      const ms = fastest(() => parseJson(text))
      expect(ms, `parseJson ${ms.toFixed(0)} ms, JSON.parse ${parse.toFixed(0)} ms`).toBeLessThan(15 * parse + 20)
    }
    expect(parseJson(String.raw`[{"\u0061":1},{"a":2,"\u0061":3},{"\u0061":4,"\t":5,"\u0009":6}]`)).toEqual([{ a: 1 }, { a: 3 }, { a: 4, "\t": 6 }])
  })
})

describe("one key written with two different escapes", () => {
  it("keeps the value written last, in the place written first, as JSON.parse does", () => {
    // Found by the fuzzer: one placeholder per spelling made them two keys, and the rebuild kept
    // the value of the spelling placed later in the object instead of the one written last.
    expect(parseJson(String.raw`{"":[[{"\t":0,"\u0009":"","\t":"__proto__"}]]}`)).toEqual({ "": [[{ "\t": "__proto__" }]] })
    expect(parseJson(String.raw`[{"\"":"__proto__","\u0022":0,"\"":"__proto__"}]`)).toEqual([{ "\"": "__proto__" }])
    expect(Object.keys(parseJson(String.raw`{"\t":1,"a":2,"\u0009":3}`) as object)).toEqual(["\t", "a"])
    expect(parseJson(String.raw`{"\t":1,"a":2,"\u0009":3}`)).toEqual({ "\t": 3, a: 2 })
  })
})
