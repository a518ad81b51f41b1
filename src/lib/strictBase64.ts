/**
 * Strict base64 (A-Z a-z 0-9 + /, padded with =): the one rule, whether the characters are a
 * string (src/files/base64.ts) or still the bytes of a request body (src/http/input/base64Literals.ts).
 */
import * as Effect from "effect/Effect"

/**
 * Whether `data` is canonical, padded base64 (A-Z a-z 0-9 + /), given what Buffer decoded from
 * it. Buffer's decoder is lenient: it skips characters outside the alphabet (whitespace, "=" in
 * the middle stops it), takes the URL-safe "-" and "_", and reads a character above U+00FF by its
 * low byte. So: every character ASCII (a UTF-8 length equal to the string's), neither "-" nor
 * "_", as many bytes as the length promises (anything skipped makes fewer), and the bits the
 * padding leaves unused zero. Measured against re-encoding and comparing: 0.47 vs 0.91 ms for a
 * 1 MiB file (a validating regex: 7 ms; bench/PROFILE.md, S3).
 */
export const isStrictBase64 = (data: string, decoded: Uint8Array): boolean => {
  const n = data.length
  if (n % 4 !== 0) return false
  const pad = n === 0 || data.charCodeAt(n - 1) !== EQUALS ? 0 : data.charCodeAt(n - 2) === EQUALS ? 2 : 1
  if (decoded.length !== (n / 4) * 3 - pad) return false
  if (Buffer.byteLength(data, "utf8") !== n || data.indexOf("-") !== -1 || data.indexOf("_") !== -1) return false
  if (pad === 0) return true
  const last = ALPHABET.indexOf(data[n - 1 - pad]!)
  return (last & (pad === 1 ? 0b11 : 0b1111)) === 0
}

const EQUALS = 61

/**
 * Characters made a string at a time within a slice (a multiple of 4): below V8's largest
 * ordinary object (128 KiB), so each piece dies young in the new space. A whole 1 MiB slice as
 * one string was outside the heap (Node's external strings start near 1 MB) or in the
 * large-object space, both counted toward the next full collection: under S3's 1 MiB uploads,
 * one mark-compact (6-10 ms, nothing concurrent at --v8-pool-size=0) every 120-150 ms.
 */
export const PIECE_CHARS = 96 * 1024
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

/** Base64 characters read a slice at a time: their count, and characters [start, end) as a string. */
export interface Base64Chars {
  readonly length: number
  readonly part: (start: number, end: number) => string
}

/** The characters of a string. */
export const stringChars = (data: string): Base64Chars => ({ length: data.length, part: (start, end) => data.slice(start, end) })

/** The characters of bytes [start, end) of an ASCII buffer (each byte one character). */
export const asciiChars = (bytes: Buffer, start: number, end: number): Base64Chars => ({
  length: end - start,
  part: (from, to) => bytes.toString("latin1", start + from, start + to)
})

/**
 * Strict base64 to bytes in slices of `sliceChars`, `between` run before each slice after the
 * first; undefined when the characters are not strict base64. The same language as
 * `isStrictBase64` on the whole: every slice but the last is unpadded base64 that decodes to
 * exactly 3/4 of its length (anything skipped, an "=" inside, makes fewer bytes), the last is
 * checked as a whole string is. The output is sized from the whole length and padding, and
 * handed out only once every byte of it was written. Only one slice is ever a string at a time.
 */
export const decodeStrictInSlices = (
  chars: Base64Chars,
  sliceChars: number,
  between: Effect.Effect<void>
): Effect.Effect<Uint8Array | undefined> =>
  Effect.suspend(() => {
    if (sliceChars <= 0 || sliceChars % 4 !== 0) throw new RangeError(`sliceChars must be a positive multiple of 4: ${sliceChars}`)
    const n = chars.length
    if (n % 4 !== 0) return Effect.succeed(undefined)
    const tail = n === 0 ? "" : chars.part(Math.max(0, n - 2), n)
    const pad = tail.endsWith("==") ? 2 : tail.endsWith("=") ? 1 : 0
    const out = Buffer.allocUnsafe((n / 4) * 3 - pad)
    let written = 0
    const piece = (start: number, end: number): boolean => {
      const part = chars.part(start, end)
      // Never past the output: a piece that decodes to more than 3/4 of its length cannot be
      // strict, and Buffer#write stops at the buffer's end anyway.
      const got = out.write(part, written, "base64")
      const decoded = out.subarray(written, written + got)
      written += got
      if (end === n) return isStrictBase64(part, decoded)
      return part.charCodeAt(part.length - 1) !== EQUALS && isStrictBase64(part, decoded)
    }
    const slice = (start: number): boolean => {
      const end = Math.min(n, start + sliceChars)
      for (let at = start; at < end; at += PIECE_CHARS) if (!piece(at, Math.min(end, at + PIECE_CHARS))) return false
      return true
    }
    return Effect.gen(function*() {
      for (let start = 0; start < n; start += sliceChars) {
        if (start > 0) yield* between
        if (!slice(start)) return undefined
      }
      return written === out.length ? out : undefined
    })
  })
