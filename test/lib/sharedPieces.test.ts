/**
 * The small pieces written once and used by several callers: a quoted value clipped to 64
 * characters, the bearer credential of an Authorization header, the constant-time secret check.
 */
import { describe, expect, it } from "vitest"
import { bearerCredential } from "../../src/http/input/bearerCredential.js"
import { clip, MAX_QUOTED_CHARS, quoted } from "../../src/lib/quoted.js"
import { secretMatcher } from "../../src/lib/secretMatcher.js"

describe("quoted", () => {
  it("quotes a short value whole and cuts a long one at 64 characters with …", () => {
    expect(quoted("text/plain")).toBe(`"text/plain"`)
    expect(quoted("a".repeat(64))).toBe(`"${"a".repeat(64)}"`)
    expect(quoted("a".repeat(65))).toBe(`"${"a".repeat(64)}…"`)
    expect(MAX_QUOTED_CHARS).toBe(64)
  })

  it("never cuts inside a surrogate pair, and shows controls escaped", () => {
    const s = `${"9".repeat(63)}😀x`
    expect(quoted(s)).toBe(`"${"9".repeat(63)}…"`)
    expect(clip(s, 65)).toBe(`${"9".repeat(63)}😀…`)
    expect(quoted("a\u0000\"b")).toBe(`"a\\u0000\\"b"`)
  })

  it("shows what JSON leaves raw escaped too: C1 controls, line separators, bidirectional and other invisible format characters", () => {
    expect(quoted("a\u2028b\u009b[2Jc\u202edcba\u007f")).toBe(`"a\\u2028b\\u009b[2Jc\\u202edcba\\u007f"`)
    // A tag character (outside the BMP) as its two escaped halves; still JSON.
    expect(quoted("x\u{E0041}y")).toBe(`"x\\udb40\\udc41y"`)
    expect(JSON.parse(quoted("x\u{E0041}\u2029y"))).toBe("x\u{E0041}\u2029y")
    // Emoji sequences and scripts keep their joiners, and letters stay letters.
    expect(quoted("👨\u200d👩 é ب\u200cی")).toBe(`"👨\u200d👩 é ب\u200cی"`)
  })
})

describe("bearerCredential", () => {
  it("takes the credential after the scheme in any case, one or more spaces, trailing spaces", () => {
    expect(bearerCredential("Bearer abc")).toBe("abc")
    expect(bearerCredential("bEARER   abc  ")).toBe("abc")
    expect(bearerCredential("Bearer ")).toBe("")
  })

  it("is undefined without a header, for another scheme, without a space, or with two words", () => {
    expect(bearerCredential(undefined)).toBeUndefined()
    expect(bearerCredential("Basic abc")).toBeUndefined()
    expect(bearerCredential("Bearer")).toBeUndefined()
    expect(bearerCredential("Bearerabc")).toBeUndefined()
    expect(bearerCredential("Bearer a b")).toBeUndefined()
    expect(bearerCredential("Bearer\tabc")).toBeUndefined()
  })
})

describe("secretMatcher", () => {
  it("accepts the secret only, whatever the length of what is sent", () => {
    const matches = secretMatcher("metrics-token-xyz")
    expect(matches("metrics-token-xyz")).toBe(true)
    expect(matches("metrics-token-xyZ")).toBe(false)
    expect(matches("")).toBe(false)
    expect(matches("metrics-token-xyz".repeat(1000))).toBe(false)
  })
})
