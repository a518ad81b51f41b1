/**
 * A webhook's data carries long strings cut at 1,024 characters (src/workspace/embedded/webhookOutbox.ts
 * `thinData`). Cut by UTF-16 units, 1,500 emoji in a decision's comments were sent ending in a lone
 * high surrogate (`"\ud83d…"`), which strict JSON parsers refuse: such a receiver answered 4xx to
 * every attempt and its subscription was disabled. Now cut by characters, never inside a pair.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { charCount } from "../../src/api/textLength.js"
import { thinData } from "../../src/workspace/embedded/webhookOutbox.js"

/** No lone surrogate: in a `u` pattern a pair is one code point, a lone half is a Cs character. */
const wellFormed = (s: string) => !/\p{Cs}/u.test(s)

describe("thinData", () => {
  it("cuts a long string after 1,023 characters and an ellipsis, never between a surrogate pair's halves", () => {
    const emoji = "😀".repeat(1_500)
    const cut = thinData({ comments: emoji }).comments as string
    expect(wellFormed(cut)).toBe(true)
    expect(cut).toBe(`${"😀".repeat(1_023)}…`)
    expect(JSON.parse(JSON.stringify({ cut }))).toEqual({ cut })
  })

  it("keeps every string of at most 1,024 characters whole, and cuts longer ones to a well-formed prefix (generated text in any script)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", minLength: 600, maxLength: 1_400 }), fc.string({ unit: "grapheme", minLength: 100, maxLength: 700 }), (a, b) => {
        for (const text of [a, b, a + b]) {
          const value = thinData({ text }).text as string
          if (charCount(text) <= 1_024) {
            expect(value).toBe(text)
          } else {
            expect(value.endsWith("…")).toBe(true)
            const kept = value.slice(0, -1)
            expect(charCount(kept)).toBe(1_023)
            expect(text.startsWith(kept)).toBe(true)
            expect(wellFormed(kept)).toBe(true)
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})
