/**
 * parseJson (src/api/jsonParse.ts) against a small parser of its own here, on generated JSON whose
 * keys are written with every escape (short ones, \uXXXX in either case, surrogate pairs split or
 * whole, lone surrogates, \u0000), named like the placeholders (🔑:0, 🔑0:), `__proto__`, duplicated
 * in two spellings, with whitespace anywhere, and now and then broken. The same value, key order
 * and own `__proto__` included, or both throw. V8's JSON.parse, the bug parseJson reads around,
 * is no reference: this process has made the transitions it mistakes escaped keys for.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseJson } from "../../src/api/jsonParse.js"

/** JSON (RFC 8259) as JSON.parse reads it, objects made with CreateDataProperty's rules. */
const reference = (text: string): unknown => {
  let i = 0
  const fail = (): never => {
    throw new SyntaxError(`bad JSON at ${i}`)
  }
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i]!)) i++
  }
  const str = (): string => {
    if (text[i] !== '"') fail()
    i++
    let out = ""
    for (;;) {
      if (i >= text.length) fail()
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return out
      }
      if (c < 0x20) fail()
      if (c !== 0x5c) {
        out += text[i++]
        continue
      }
      const e = text[i + 1]
      const short: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
      if (e !== undefined && e in short) {
        out += short[e]
        i += 2
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
        out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16))
        i += 6
      } else fail()
    }
  }
  const value = (): unknown => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      const o: Record<string, unknown> = {}
      ws()
      if (text[i] === "}") {
        i++
        return o
      }
      for (;;) {
        ws()
        const k = str()
        ws()
        if (text[i++] !== ":") fail()
        Object.defineProperty(o, k, { value: value(), writable: true, enumerable: true, configurable: true })
        ws()
        const d = text[i++]
        if (d === "}") return o
        if (d !== ",") fail()
      }
    }
    if (c === "[") {
      i++
      const a: Array<unknown> = []
      ws()
      if (text[i] === "]") {
        i++
        return a
      }
      for (;;) {
        a.push(value())
        ws()
        const d = text[i++]
        if (d === "]") return a
        if (d !== ",") fail()
      }
    }
    if (c === '"') return str()
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      if (text.startsWith(word, i)) {
        i += word.length
        return v
      }
    }
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i))
    if (m === null) return fail()
    i += m[0].length
    return Number(m[0])
  }
  const v = value()
  ws()
  if (i !== text.length) fail()
  return v
}

/** A value as text: own keys in order, prototypes, -0 and lone surrogates told apart. */
const canon = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(canon).join(",")}]`
  if (v !== null && typeof v === "object") {
    const proto = Object.getPrototypeOf(v) === Object.prototype ? "" : "!proto "
    return `{${proto}${Object.keys(v).map((k) => `${JSON.stringify(k)}:${canon((v as Record<string, unknown>)[k])}`).join(",")}}`
  }
  return Object.is(v, -0) ? "-0" : JSON.stringify(v)
}

const hex = (c: number, upper: boolean) => {
  const h = c.toString(16).padStart(4, "0")
  return `\\u${upper ? h.toUpperCase() : h}`
}
const SHORT: Record<string, string> = { '"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t" }

/** A string literal for `s`, each UTF-16 unit written plainly where it may be, or escaped (how: `ways`). */
const literal = (s: string, ways: ReadonlyArray<number>): string => {
  let out = '"'
  for (let k = 0; k < s.length; k++) {
    const ch = s[k]!
    const c = s.charCodeAt(k)
    const way = ways[k % ways.length]!
    const mustEscape = c < 0x20 || ch === '"' || ch === "\\" || (c >= 0xd800 && c <= 0xdfff && way !== 0)
    if (!mustEscape && way === 0) out += ch
    else if (SHORT[ch] !== undefined && way !== 3) out += SHORT[ch]
    else out += hex(c, way === 2)
  }
  return `${out}"`
}

const keyText = fc.oneof(
  fc.constantFrom("__proto__", "🔑:0", "🔑:", "🔑0:", "🔑0:0", "🔑1:0", "🔑🔑:0", "", "0", "1", "h", "a", "constructor", "\"", "\\", "\t", "\u0000", "\uD800", "\uDD11"),
  fc.array(fc.constantFrom("a", "h", "0", "_", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\u0000", "🔑", ":", "é", "\uD83D", "\uDD11", "\u2028"), { maxLength: 6 }).map((cs) => cs.join(""))
)
const ways = fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 })
const space = fc.constantFrom("", "", "", " ", "\n", "\t ", "\r\n")
const key = fc.tuple(keyText, ways).map(([k, w]) => literal(k, w))

const { json } = fc.letrec<{ json: string; object: string; array: string; leaf: string }>((tie) => ({
  leaf: fc.oneof(
    fc.constantFrom("0", "-0", "1", "9007199254740993", "1.5e3", "true", "false", "null", "\"\\\\\"", "\"a\\\"b\""),
    fc.tuple(keyText, ways).map(([k, w]) => literal(k, w))
  ),
  object: fc.array(fc.tuple(space, key, space, space, tie("json")), { maxLength: 5 }).map((members) =>
    `{${members.map(([s1, k, s2, s3, v]) => `${s1}${k}${s2}:${s3}${v}`).join(",")}}`),
  array: fc.array(tie("json"), { maxLength: 4 }).map((items) => `[${items.join(",")}]`),
  json: fc.oneof({ depthSize: "small", withCrossShrink: true }, tie("leaf"), tie("object"), tie("array"))
}))

/** Now and then the text broken: a character dropped, or a bad escape put in. */
const maybeBroken = fc.tuple(json, fc.integer({ min: 0, max: 9 }), fc.nat()).map(([text, how, at]) => {
  const p = at % (text.length + 1)
  if (how === 0) return text.slice(0, p) + text.slice(p + 1)
  if (how === 1) return `${text.slice(0, p)}\\x${text.slice(p)}`
  return text
})

describe("parseJson against a reference parser", () => {
  it("gives the same value, or throws where it throws", () => {
    // The transitions V8's bug reads escaped keys through, as any earlier body makes them.
    for (const k of ["h", "a", "0", "1", "", "🔑:0", "__proto__", "constructor"]) JSON.parse(`{"${k}":[],"\\\\":0,"\\"":1}`)
    fc.assert(
      fc.property(maybeBroken, (text) => {
        let expected: string | undefined
        try {
          expected = canon(reference(text))
        } catch {
          expected = undefined
        }
        if (expected === undefined) expect(() => parseJson(text), text).toThrow(SyntaxError)
        else expect(canon(parseJson(text)), text).toBe(expected)
      }),
      { numRuns: 3000 }
    )
  })
})
