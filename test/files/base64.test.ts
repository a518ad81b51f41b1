import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { randomBytes } from "node:crypto"
import { DECODE_SLICE_CHARS, decodeBase64, decodeStrictInSlices } from "../../src/files/base64.js"
import * as fc from "../fixtures/arbitrary.js"
import { asciiChars, decodeStrictInSlices as decodeCharsInSlices, PIECE_CHARS } from "../../src/lib/strictBase64.js"

const decode = (s: string) => Effect.runSync(Effect.result(decodeBase64("data", s)))

describe("strict base64", () => {
  it("accepts canonical padded base64, including the empty string", () => {
    for (const text of ["", "a", "ab", "abc", "\u0000\u00ff binary \u20ac"]) {
      const b64 = Buffer.from(text).toString("base64")
      const out = decode(b64)
      expect(Result.isSuccess(out) && Buffer.from(out.success).equals(Buffer.from(text))).toBe(true)
    }
  })

  it("refuses characters outside the alphabet, whitespace, missing or extra padding, non-canonical bits, base64url", () => {
    for (const bad of ["QUJD=", "QUI", "QQ", "QR==", "QUJ D", "QUJD\n", "QU=D", "====", "QUJD====", "-_-_", "not base64!"]) {
      const out = decode(bad)
      expect(Result.isFailure(out), bad).toBe(true)
      if (Result.isFailure(out)) expect(out.failure.message).toContain("data: must be strict base64")
    }
  })
})

describe("strict base64: the checks match re-encoding (the definition of canonical)", () => {
  const canonical = (s: string) => s.length % 4 === 0 && Buffer.from(s, "base64").toString("base64") === s
  const accepted = (s: string) => Result.isSuccess(decode(s))

  it("a character above U+00FF is refused even where its low byte is in the alphabet", () => {
    // Buffer's decoder reads U+0141 as 0x41 ("A"): "ŁUJD" would decode like "AUJD".
    for (const bad of ["\u0141UJD", "QUJ\u0144", "\u0151Q==", "QUJD\u0141\u0141==", "\uff21UJD"]) {
      expect(accepted(bad), bad).toBe(false)
    }
    // Latin-1 letters are outside the alphabet too.
    for (const bad of ["\u00c1UJD", "QUJD\u00e9A==", "Q\u00ffJD"]) expect(accepted(bad), bad).toBe(false)
  })

  it("agrees with re-encoding on generated near-base64 strings", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    const edits = fc.constantFrom("", "=", "-", "_", " ", "\n", "A", "\u0141", "\u00c1", "==", "\u0000")
    const near = fc.oneof(
      // Canonical encodings of random bytes, then one character replaced, inserted or removed.
      fc.tuple(fc.uint8Array({ maxLength: 40 }), fc.nat(), edits, fc.constantFrom("replace", "insert", "delete", "none"))
        .pipe(fc.map(([bytes, at, ch, op]) => {
          const s = Buffer.from(bytes).toString("base64")
          const i = at % (s.length + 1)
          return op === "replace" ? s.slice(0, i) + ch + s.slice(i + 1)
            : op === "insert" ? s.slice(0, i) + ch + s.slice(i)
            : op === "delete" ? s.slice(0, i) + s.slice(i + 1)
            : s
        })),
      fc.array(fc.constantFrom(...alphabet, "=", "-", "_", "\u0141"), { maxLength: 16 }).pipe(fc.map((cs) => cs.join("")))
    )
    let both = 0
    fc.assertProperty(near, (s) => {
      if (canonical(s)) both++
      return accepted(s) === canonical(s)
    }, { numRuns: 5_000, seed: 12 })
    // The generator reaches both answers (a check that accepts nothing would fail above, too).
    expect(both).toBeGreaterThan(500)
  })
})

describe("strict base64 in slices (large inputs): the same language and the same bytes as the whole", () => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  const canonical = (s: string) => s.length % 4 === 0 && Buffer.from(s, "base64").toString("base64") === s
  const sliced = (s: string, sliceChars: number) => Effect.runSync(decodeStrictInSlices(s, sliceChars, Effect.void))

  it("agrees with re-encoding for every slice size, an edit anywhere (at slice boundaries too)", () => {
    const edits = fc.constantFrom("", "=", "==", "-", "_", " ", "\n", "A", "\u0141", "\u00c1", "\u0000")
    const near = fc.tuple(fc.uint8Array({ maxLength: 60 }), fc.nat(), edits, fc.constantFrom("replace", "insert", "delete", "none"))
      .pipe(fc.map(([bytes, at, ch, op]) => {
        const s = Buffer.from(bytes).toString("base64")
        const i = at % (s.length + 1)
        return op === "replace" ? s.slice(0, i) + ch + s.slice(i + 1)
          : op === "insert" ? s.slice(0, i) + ch + s.slice(i)
          : op === "delete" ? s.slice(0, i) + s.slice(i + 1)
          : s
      }))
    const anyChars = fc.array(fc.constantFrom(...alphabet, "=", "-", "_", "\u0141"), { maxLength: 24 }).pipe(fc.map((cs) => cs.join("")))
    let both = 0
    fc.assertProperty(fc.tuple(fc.oneof(near, anyChars), fc.constantFrom(4, 8, 12, 16, 64)), ([s, sliceChars]) => {
      const out = sliced(s, sliceChars)
      if (!canonical(s)) return out === undefined
      both++
      return out !== undefined && Buffer.from(out).equals(Buffer.from(s, "base64"))
    }, { numRuns: 10_000, seed: 22 })
    expect(both).toBeGreaterThan(1000)
  })

  it("refuses padding or a stray character at the end of a slice that is not the last", () => {
    const good = Buffer.from("0123456789abcdef").toString("base64") // 24 characters, no padding
    expect(sliced(good, 8)).toBeDefined()
    for (const bad of ["QQ==" + good, good.slice(0, 4) + "QQ==" + good.slice(8), good.slice(0, 7) + "=" + good.slice(8)]) {
      expect(sliced(bad, 8), bad).toBeUndefined()
      expect(sliced(bad, 4), bad).toBeUndefined()
    }
  })

  it("no string longer than a piece is made, whatever the slice: each dies young instead of counting toward a full collection", () => {
    const bytes = randomBytes(2 * 1024 * 1024 + 1)
    const text = Buffer.from(bytes.toString("base64"), "latin1")
    const chars = asciiChars(text, 0, text.length)
    let longest = 0
    const watched = { length: chars.length, part: (from: number, to: number) => (longest = Math.max(longest, to - from), chars.part(from, to)) }
    const out = Effect.runSync(decodeCharsInSlices(watched, DECODE_SLICE_CHARS, Effect.void))
    expect(Buffer.from(out!).equals(bytes)).toBe(true)
    expect(PIECE_CHARS % 4).toBe(0)
    // V8's largest ordinary object is 128 KiB: past it, a string goes to the large-object space.
    expect(PIECE_CHARS).toBeLessThan(128 * 1024)
    expect(longest).toBeLessThanOrEqual(PIECE_CHARS)
    // A flaw at a piece's edge inside a slice is refused like one at a slice's edge.
    for (const at of [PIECE_CHARS - 1, PIECE_CHARS, PIECE_CHARS + 1, 2 * PIECE_CHARS - 1]) {
      for (const ch of ["=", " ", "-"]) {
        const bad = Buffer.from(text)
        bad[at] = ch.charCodeAt(0)
        expect(Effect.runSync(decodeCharsInSlices(asciiChars(bad, 0, bad.length), DECODE_SLICE_CHARS, Effect.void)), `${ch} at ${at}`).toBeUndefined()
      }
    }
  })

  it("a large input (sliced by decodeBase64) round-trips byte for byte, and a flaw far inside it is refused", async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 2)
    const b64 = bytes.toString("base64")
    const out = await Effect.runPromise(decodeBase64("data", b64))
    expect(Buffer.from(out).equals(bytes)).toBe(true)
    for (const at of [DECODE_SLICE_CHARS - 1, DECODE_SLICE_CHARS, 2 * DECODE_SLICE_CHARS + 3]) {
      for (const ch of ["=", " ", "-", "\u0141"]) {
        const bad = b64.slice(0, at) + ch + b64.slice(at + 1)
        const got = await Effect.runPromise(Effect.result(decodeBase64("data", bad)))
        expect(Result.isFailure(got), `${JSON.stringify(ch)} at ${at}`).toBe(true)
      }
    }
  })
})
