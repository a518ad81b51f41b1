import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseJsonBody } from "../../src/http/input/jsonInput.js"
import { parseWithLongStrings, textWithoutLongStrings } from "../../src/http/input/jsonLongStrings.js"

/** JSON.parse's answer: the value as JSON (key order kept), or that it throws. */
const reference = (text: string): string | undefined => {
  try {
    return JSON.stringify(JSON.parse(text))
  } catch {
    return undefined
  }
}

describe("long string values made from the bytes: JSON.parse's value, or none", () => {
  // Small thresholds so that generated bodies have many long literals.
  const MIN = 8
  const long = fc.stringMatching(/^[A-Za-z0-9+/=]{8,40}$/)
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      long,
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.constant(null),
      fc.array(tie("value"), { maxLength: 4 }),
      fc.dictionary(fc.oneof(long, fc.string({ maxLength: 6 }), fc.constant("__proto__")), tie("value"), { maxKeys: 4 })
    )
  })).value
  const edits = fc.constantFrom("", "\"", "\\", "\\\"", "\\\\", "\n", "\t", "\u0001", "\u0000", ":", ",", "}", "]", " ", "x", "\\u0041")
  const body = fc.tuple(json, fc.nat(), edits, fc.constantFrom("insert", "replace", "none"), fc.boolean()).map(([v, at, ch, op, spaced]) => {
    const s = JSON.stringify(v, null, spaced ? 1 : undefined) ?? "null"
    const i = at % (s.length + 1)
    return op === "insert" ? s.slice(0, i) + ch + s.slice(i) : op === "replace" ? s.slice(0, i) + ch + s.slice(i + 1) : s
  })

  it("agrees with JSON.parse on generated bodies with edits anywhere", () => {
    let cut = 0
    fc.assert(fc.property(body, (text) => {
      const got = parseWithLongStrings(Buffer.from(text, "latin1"), MIN)
      if (got === undefined) return true
      cut++
      return JSON.stringify(got.value) === reference(text)
    }), { numRuns: 20_000, seed: 22 })
    // The fast path is taken often enough for the comparison to mean something.
    expect(cut).toBeGreaterThan(3_000)
  })

  it("in UTF-8 too; a kept literal's bytes are the string JSON.parse gives, at the kept path only", () => {
    const word = fc.oneof(fc.fullUnicodeString({ maxLength: 6 }), fc.stringMatching(/^[A-Za-z0-9+/=]{8,30}$/))
    const value = fc.oneof(word, fc.integer(), fc.array(word, { maxLength: 3 }), fc.dictionary(word, word, { maxKeys: 3 }))
    const bodies = fc.tuple(fc.dictionary(word, value, { maxKeys: 4 }), fc.oneof(fc.constant(undefined), word), fc.nat(), fc.constantFrom("", "\u0001", "\"", "\u00e9", " "))
      .map(([rest, data, at, edit]) => {
        const s = JSON.stringify(data === undefined ? rest : { ...rest, data })
        const i = at % (s.length + 1)
        return s.slice(0, i) + edit + s.slice(i)
      })
    let kept = 0
    fc.assert(fc.property(bodies, (generated) => {
      const bytes = Buffer.from(generated, "utf8")
      const text = bytes.toString("utf8") // lone surrogates became U+FFFD
      const got = parseWithLongStrings(bytes, MIN, [["data"]], "utf8")
      if (got === undefined) return true
      // Each kept literal is the value at data, made of the bytes it names.
      // A raw control character in it is left for the decode to find (../../src/http/input/base64Literals.ts):
      // the body is then not JSON.
      let value = got.value as Record<string, unknown>
      let control = false
      for (const k of got.kept) {
        if (value.data !== k.placeholder) return false
        const literal = bytes.toString("utf8", k.start, k.end)
        control ||= /[\u0000-\u001f]/.test(literal)
        value = { ...value, data: literal }
        kept++
      }
      if (control) return reference(text) === undefined
      return got.kept.length <= 1 && JSON.stringify(value) === reference(text)
    }), { numRuns: 5_000, seed: 36 })
    expect(kept).toBeGreaterThan(200)
  })

  it("refuses what would change the answer: escapes, control characters, keys", () => {
    const plain = "A".repeat(16)
    expect(parseWithLongStrings(Buffer.from(`{"data":"${plain}"}`), MIN)?.value).toEqual({ data: plain })
    expect(parseWithLongStrings(Buffer.from(`{"data":"${plain}\\n"}`), MIN)).toBeUndefined()
    expect(parseWithLongStrings(Buffer.from(`{"data":"${plain}\u0001"}`), MIN)).toBeUndefined()
    expect(parseWithLongStrings(Buffer.from(`{"${plain}":1}`), MIN)).toBeUndefined()
    expect(parseWithLongStrings(Buffer.from(`{"a":"x\\"${plain}"}`), MIN)).toBeUndefined()
  })

  it("a large upload body parses to the same value and the same errors as before", () => {
    const data = Buffer.alloc(600 * 1024, 7).toString("base64")
    const ok = `{"source":"s","fileName":"f.bin","data":"${data}"}`
    const parsed = parseJsonBody(Buffer.from(ok), "application/json", 64)
    expect(parsed.ok && JSON.stringify(parsed.value) === ok).toBe(true)
    for (const bad of [ok.replace(`"data":"`, `"data":"\u0001`), ok.slice(0, -1), ok.replace(`"f.bin"`, `"f\u0000.bin"`), `{"__proto__":"${data}"}`]) {
      const got = parseJsonBody(Buffer.from(bad), "application/json", 64)
      let expected: string
      try {
        JSON.parse(bad)
        expected = "parsed"
      } catch (e) {
        expected = `Malformed request body: expected valid JSON (${(e as Error).message.slice(0, 120)})`
      }
      expect(got.ok).toBe(false)
      if (!got.ok && expected !== "parsed") expect(got.error.message).toBe(expected)
    }
  })
})

describe("textWithoutLongStrings", () => {
  it("makes long string values \"\" and keeps keys, short strings, escapes and numbers as they are", () => {
    const long = "x".repeat(100)
    const json = `{"${long}":{"a":"${long}","b\\"":"q\\\\","n":[1,"${long}\\"${long}",9007199254740993]}}`
    const text = textWithoutLongStrings(Buffer.from(json), 50)
    expect(text).toBe(`{"${long}":{"a":"","b\\"":"q\\\\","n":[1,"",9007199254740993]}}`)
    expect(textWithoutLongStrings(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`{"é":"${long}"}`)]), 50)).toBe(`{"é":""}`)
  })
})
