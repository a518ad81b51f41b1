import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { decodeBase64 } from "../../src/files/base64.js"

const decode = (s: string) => Effect.runSync(Effect.either(decodeBase64("data", s)))

describe("strict base64", () => {
  it("accepts canonical padded base64, including the empty string", () => {
    for (const text of ["", "a", "ab", "abc", "\u0000\u00ff binary \u20ac"]) {
      const b64 = Buffer.from(text).toString("base64")
      const out = decode(b64)
      expect(Either.isRight(out) && Buffer.from(out.right).equals(Buffer.from(text))).toBe(true)
    }
  })

  it("refuses characters outside the alphabet, whitespace, missing or extra padding, non-canonical bits, base64url", () => {
    for (const bad of ["QUJD=", "QUI", "QQ", "QR==", "QUJ D", "QUJD\n", "QU=D", "====", "QUJD====", "-_-_", "not base64!"]) {
      const out = decode(bad)
      expect(Either.isLeft(out), bad).toBe(true)
      if (Either.isLeft(out)) expect(out.left.message).toContain("data: must be strict base64")
    }
  })
})
