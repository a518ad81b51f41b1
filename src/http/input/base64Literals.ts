/**
 * A large upload's base64 file content, decoded straight from the request body's bytes: the
 * 40 MiB literal of a 30 MiB file is never made a string (its copy and join were 290-450 ms of
 * one synchronous stretch per upload; bench/PROFILE.md). The body parser (./jsonLongStrings.ts)
 * leaves a placeholder in the field's place, only at the fields the contract names as base64
 * file content (src/api/files.ts, BASE64_FILE_FIELDS); the bytes are decoded here a slice at a
 * time, other requests served between slices, and handed to the request's fibers through
 * `Base64Literals`, where the upload's decode (src/files/base64.ts) finds them by placeholder.
 * The rule (strict base64, src/lib/strictBase64.ts) and the field's error are the string path's.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { timeSlice } from "../../lib/eventLoop.js"
import { asciiChars, decodeStrictInSlices } from "../../lib/strictBase64.js"

/** A long string value left as bytes [start, end) of the body, `placeholder` in its place. */
export interface KeptLiteral {
  readonly placeholder: string
  readonly start: number
  readonly end: number
}

/**
 * The request's decoded base64 fields by placeholder: the bytes, or undefined when the literal
 * is not strict base64. Empty outside such a request (a placeholder is random per body, so no
 * value a client sends can name one).
 */
export const Base64Literals: Context.Reference<ReadonlyMap<string, Uint8Array | undefined>> = Context.Reference<
  ReadonlyMap<string, Uint8Array | undefined>
>("http/input/Base64Literals", { defaultValue: () => new Map() })

/**
 * Characters per slice (a multiple of 4): under Node's 1 MB threshold past which a Latin-1 string
 * is made external (external bytes count towards the old generation's limit: more mark-compacts).
 */
export const LITERAL_SLICE_CHARS = 768 * 1024

const CONTROL = /[\u0000-\u001f]/

export type DecodedLiterals =
  | { readonly _tag: "Decoded"; readonly decoded: ReadonlyMap<string, Uint8Array | undefined> }
  /** A raw control character at byte `at`: the body is not JSON (the parser's error is due). */
  | { readonly _tag: "NotJson"; readonly at: number }

/** The position of the first control character in bytes [start, end), looked for a slice at a time. */
const firstControl = (bytes: Buffer, start: number, end: number, between: Effect.Effect<void>): Effect.Effect<number | undefined> =>
  Effect.gen(function*() {
    for (let from = start; from < end; from += LITERAL_SLICE_CHARS) {
      if (from > start) yield* between
      const to = Math.min(end, from + LITERAL_SLICE_CHARS)
      const found = bytes.toString("latin1", from, to).search(CONTROL)
      if (found !== -1) return from + found
    }
    return undefined
  })

/**
 * Decodes each kept literal of `bytes` (an ASCII body) as strict base64, in body order. A literal
 * that is not strict base64 is looked through for a raw control character, which JSON forbids in
 * a string: the whole body then fails as JSON, as it did when the literal was parsed as a string.
 */
export const decodeLiterals = (
  bytes: Buffer,
  literals: ReadonlyArray<KeptLiteral>,
  sliceChars = LITERAL_SLICE_CHARS
): Effect.Effect<DecodedLiterals> =>
  Effect.gen(function*() {
    const between = timeSlice()
    const decoded = new Map<string, Uint8Array | undefined>()
    for (const literal of literals) {
      const out = yield* decodeStrictInSlices(asciiChars(bytes, literal.start, literal.end), sliceChars, between)
      if (out === undefined) {
        const at = yield* firstControl(bytes, literal.start, literal.end, between)
        if (at !== undefined) return { _tag: "NotJson", at } as const
      }
      decoded.set(literal.placeholder, out)
    }
    return { _tag: "Decoded", decoded } as const
  })
