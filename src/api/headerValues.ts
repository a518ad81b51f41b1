/**
 * Values the gateway later writes into response headers (a document's Content-Type and its
 * file name in Content-Disposition) are checked against the header grammar when they come in,
 * so that everything stored can be served exactly as acknowledged.
 */
import * as Schema from "effect/Schema"
import { charCount, isMaxChars } from "./textLength.js"

export const MAX_MEDIA_TYPE_LENGTH = 255

// RFC 9110 §5.6.2 tchar, §5.6.4 qdtext and quoted-pair (ASCII only: obs-text is not accepted).
const TCHAR = new Uint8Array(128)
for (const c of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TCHAR[c.charCodeAt(0)] = 1
const isTchar = (c: number): boolean => c < 128 && TCHAR[c] === 1
const isQdtext = (c: number): boolean =>
  c === 0x09 || c === 0x20 || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e)
const isQuotedPairChar = (c: number): boolean => c === 0x09 || (c >= 0x20 && c <= 0x7e)

/** The end of the token starting at `i` (`i` itself when there is none). */
const tokenEnd = (s: string, i: number): number => {
  while (i < s.length && isTchar(s.charCodeAt(i))) i++
  return i
}
const owsEnd = (s: string, i: number): number => {
  while (i < s.length && (s.charCodeAt(i) === 0x20 || s.charCodeAt(i) === 0x09)) i++
  return i
}
/** The end of the quoted-string opening at `i`, or -1. */
const quotedEnd = (s: string, i: number): number => {
  for (let k = i + 1; k < s.length; k++) {
    const c = s.charCodeAt(k)
    if (c === 0x22) return k + 1
    if (c === 0x5c) {
      if (k + 1 >= s.length || !isQuotedPairChar(s.charCodeAt(k + 1))) return -1
      k++
    } else if (!isQdtext(c)) return -1
  }
  return -1
}

/**
 * RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS [ parameter ] )`, parameter =
 * `token "=" ( token / quoted-string )`. A single left-to-right scan that never goes back: the
 * regular expression it replaces backtracked exponentially on runs of `;` and whitespace
 * (measured: 59 bytes took 16 s and froze the process).
 */
export const isMediaType = (s: string): boolean => {
  if (s.length > MAX_MEDIA_TYPE_LENGTH) return false
  const typeEnd = tokenEnd(s, 0)
  if (typeEnd === 0 || s.charCodeAt(typeEnd) !== 0x2f) return false
  let i = tokenEnd(s, typeEnd + 1)
  if (i === typeEnd + 1) return false
  while (i < s.length) {
    i = owsEnd(s, i)
    if (s.charCodeAt(i) !== 0x3b) return false
    i = owsEnd(s, i + 1)
    const nameEnd = tokenEnd(s, i)
    if (nameEnd === i) continue // no parameter here: only OWS ";" or the end may follow
    if (s.charCodeAt(nameEnd) !== 0x3d) return false
    const value = nameEnd + 1
    i = s.charCodeAt(value) === 0x22 ? quotedEnd(s, value) : tokenEnd(s, value)
    if (i <= value) return false
  }
  return true
}

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = "\"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*\""

/**
 * The same grammar as a pattern, for the OpenAPI document only (the check is isMediaType). It is
 * written so that each input has one parse: whitespace after a `;` belongs to the parameter that
 * follows, else to the next `;`, and trailing whitespace is allowed only right after a `;`.
 */
export const MEDIA_TYPE_DOC_PATTERN =
  `^${TOKEN}/${TOKEN}(?:[ \\t]*;(?:[ \\t]*${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*(?:(?<=;)[ \\t]*)?$`

const MEDIA_TYPE_MESSAGE = "must be a media type as in RFC 9110, e.g. application/pdf or text/plain; charset=utf-8"

export const MediaType = Schema.String.check(
  Schema.isMaxLength(MAX_MEDIA_TYPE_LENGTH).abort(),
  Schema.makeFilter(isMediaType, {
    message: MEDIA_TYPE_MESSAGE,
    toJsonSchema: () => ({ pattern: MEDIA_TYPE_DOC_PATTERN }),
    // Property tests: generate from a few real types and parameter forms (the check cannot guide it).
    arbitraryConstraint: {
      patterns: [{
        source: `^(?:application/pdf|text/csv|image/png|application/vnd\\.ms-excel|text/plain)(?:; charset=utf-8|;q="a b"| ; x=y;|;)?$`,
        flags: ""
      }]
    }
  })
).annotate({
  identifier: "MediaType",
  description: "MIME type (RFC 9110 media type)"
})

export const MAX_FILE_NAME_LENGTH = 255

/**
 * Invisible format characters: Unicode Cf (the bidirectional controls U+202A-U+202E,
 * U+2066-U+2069, U+200E, U+200F, U+061C, and zero-width space, word joiner, BOM, soft hyphen, tag
 * characters, ...) and the line and paragraph separators. ZWNJ and ZWJ are not among them: emoji
 * sequences and several scripts need them. `inv\u202Efdp.exe` shows as `invexe.pdf`.
 */
const FORMAT_CHARS = /[\p{Cf}\u2028\u2029]/gu
const JOINERS = new Set(["\u200c", "\u200d"])

const hex = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`

/** Why `s` is refused for an invisible format character, or undefined. */
const invisibleProblem = (s: string): string | undefined => {
  for (const [c] of s.matchAll(FORMAT_CHARS)) {
    if (!JOINERS.has(c)) {
      return `must not contain bidirectional controls or invisible format characters (found ${hex(c)})`
    }
  }
  return undefined
}

/** `s` with each invisible format character (see above) replaced by `_`: for names the caller did not choose. */
export const neutraliseInvisible = (s: string): string => s.replace(FORMAT_CHARS, (c) => (JOINERS.has(c) ? c : "_"))

/**
 * A file name, not a path: no control characters (C0, DEL, C1), no `/` or `\`, not `.` or `..`,
 * no unpaired surrogate, no bidirectional control or other invisible format character.
 * Any other Unicode text is kept exactly and served with RFC 8187 `filename*`.
 */
// `u`: a surrogate pair is one code point (kept), an unpaired half is excluded like a control.
const FILE_NAME_PATTERN = /^(?!\.{1,2}$)[^\u0000-\u001f\u007f-\u009f/\\\uD800-\uDFFF]+$/u

const FILE_NAME_MESSAGE = "must be a file name: no control characters, no / or \\, not . or .."

export const fileNameProblem = (s: string): string | undefined =>
  s.length === 0 || charCount(s) > MAX_FILE_NAME_LENGTH
    ? `must be 1-${MAX_FILE_NAME_LENGTH} characters`
    : FILE_NAME_PATTERN.test(s)
    ? invisibleProblem(s)
    : FILE_NAME_MESSAGE

export const FileName = Schema.String.check(
  Schema.isMinLength(1).abort(),
  // Characters, as the message says: 255 emoji are a name of 255 characters, not 510.
  isMaxChars(MAX_FILE_NAME_LENGTH).abort(),
  Schema.isPattern(FILE_NAME_PATTERN, { message: FILE_NAME_MESSAGE }).abort(),
  Schema.makeFilter((s) => invisibleProblem(s) ?? true)
).annotate({
  identifier: "FileName",
  description: "A file name (no path); any Unicode text but bidirectional controls and invisible format characters"
})
