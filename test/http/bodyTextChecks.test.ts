/**
 * A body's strings and keys are tested for NUL and unpaired surrogates only when its bytes hold a
 * `\u` escape (src/http/input/jsonInput.ts `textsMayHaveProblems`): the verdict must be the full
 * checks' on every body, whatever its script, escapes or edits.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jsonValueProblem } from "../../src/api/jsonValue.js"
import { parseJsonBody } from "../../src/http/input/jsonInput.js"

const DEPTH = 64

/** The full checks on what the bytes decode to: the problem's message, or "ok", or "malformed". */
const reference = (bytes: Buffer): string => {
  let value: unknown
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes))
  } catch {
    return "malformed"
  }
  return jsonValueProblem(value, DEPTH, true) ?? "ok"
}

const verdict = (bytes: Buffer): string => {
  const parsed = parseJsonBody(bytes, "application/json", DEPTH)
  if (parsed.ok === true) return "ok"
  if (parsed.ok === false) return parsed.error.message.startsWith("Malformed request body") ? "malformed" : parsed.error.message
  return "base64"
}

/** Text with the characters that matter: NUL, either surrogate half alone or paired, other scripts. */
const text = fc.array(
  fc.oneof(
    fc.constantFrom("\u0000", "\uD800", "\uDFFF", "\uD83D\uDE00", "é", "ж", "中", "\\", "u", "\"", "a", "\u0001", "\n"),
    fc.string({ maxLength: 4 }),
    fc.fullUnicodeString({ maxLength: 3 })
  ),
  { maxLength: 6 }
).map((parts) => parts.join(""))

const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    text,
    fc.integer(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(text, tie("value"), { maxKeys: 4 })
  )
})).value

/**
 * JSON.stringify escapes NUL and lone surrogates as `\u` sequences; written raw instead, every
 * character goes out as its UTF-8 (a lone surrogate as U+FFFD, what a client's encoder does).
 */
const rawly = (s: string): string => s.replace(/\\u([0-9a-f]{4})/g, (all, hex: string) => {
  const c = String.fromCharCode(parseInt(hex, 16))
  return c === "\"" || c === "\\" || c < " " ? all : c
})

describe("a body's text checks, skipped without a \\u escape: the same verdict as the full checks", () => {
  it("on generated bodies, escaped or raw, whole or edited", () => {
    let checked = 0
    let skipped = 0
    fc.assert(
      fc.property(json, fc.boolean(), fc.nat(), fc.constantFrom("", "\u0000", "\\u0000", "\\ud800", "\\\\u", "\uD800", "x"), (value, raw, at, edit) => {
        const s = JSON.stringify(value) ?? "null"
        const escaped = raw ? rawly(s) : s
        const i = at % (escaped.length + 1)
        const bytes = Buffer.from(escaped.slice(0, i) + edit + escaped.slice(i), "utf8")
        if (bytes.includes("\\u")) checked++
        else skipped++
        expect(verdict(bytes)).toBe(reference(bytes))
      }),
      { numRuns: 20_000, seed: 36 }
    )
    // Both ways are taken often enough for the comparison to mean something.
    expect(checked).toBeGreaterThan(2_000)
    expect(skipped).toBeGreaterThan(2_000)
  })

  it("by hand: emoji raw (paired) accepted; NUL and lone halves by escape refused, in a large body too", () => {
    const large = "a".repeat(300 * 1024)
    expect(verdict(Buffer.from(JSON.stringify({ note: "🙂 ok", big: large })))).toBe("ok")
    expect(verdict(Buffer.from(`{"big":"${large}","deep":[{"x":"a\\u0000b"}]}`))).toMatch(/deep\[0\]\.x: contains a NUL/)
    expect(verdict(Buffer.from(`{"big":"${large}","k\\ud800":1}`))).toMatch(/the key contains an unpaired/)
    expect(verdict(Buffer.from(`{"path":"C:\\\\users\\\\u"}`))).toBe("ok")
    expect(verdict(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0x00, 0x22, 0x7d]))).toBe("malformed")
  })
})
