/**
 * Values the gateway later writes into response headers (a document's Content-Type and its
 * file name in Content-Disposition) are checked against the header grammar when they come in,
 * so that everything stored can be served exactly as acknowledged.
 */
import * as Schema from "effect/Schema"

// RFC 9110 §5.6.2 token, §5.6.4 quoted-string (ASCII only: obs-text is not accepted).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const QUOTED = "\"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e]|\\\\[\\t\\x20-\\x7e])*\""

/** RFC 9110 §8.3.1: `type "/" subtype *( OWS ";" OWS [ parameter ] )`. */
export const MEDIA_TYPE_PATTERN = new RegExp(`^${TOKEN}/${TOKEN}(?:[ \\t]*;[ \\t]*(?:${TOKEN}=(?:${TOKEN}|${QUOTED}))?)*$`)

export const MAX_MEDIA_TYPE_LENGTH = 255

export const isMediaType = (s: string): boolean => s.length <= MAX_MEDIA_TYPE_LENGTH && MEDIA_TYPE_PATTERN.test(s)

export const MediaType = Schema.String.pipe(
  Schema.maxLength(MAX_MEDIA_TYPE_LENGTH),
  Schema.pattern(MEDIA_TYPE_PATTERN, {
    message: () => "must be a media type as in RFC 9110, e.g. application/pdf or text/plain; charset=utf-8"
  }),
  Schema.annotations({ identifier: "MediaType", description: "MIME type (RFC 9110 media type)" })
)

export const MAX_FILE_NAME_LENGTH = 255

/**
 * A file name, not a path: no control characters (C0, DEL, C1), no `/` or `\`, not `.` or `..`,
 * no unpaired surrogate.
 * Any other Unicode text is kept exactly and served with RFC 8187 `filename*`.
 */
// `u`: a surrogate pair is one code point (kept), an unpaired half is excluded like a control.
const FILE_NAME_PATTERN = /^(?!\.{1,2}$)[^\u0000-\u001f\u007f-\u009f/\\\uD800-\uDFFF]+$/u

export const fileNameProblem = (s: string): string | undefined =>
  s.length === 0 || s.length > MAX_FILE_NAME_LENGTH
    ? `must be 1-${MAX_FILE_NAME_LENGTH} characters`
    : FILE_NAME_PATTERN.test(s)
    ? undefined
    : "must be a file name: no control characters, no / or \\, not . or .."

export const FileName = Schema.String.pipe(
  Schema.minLength(1),
  Schema.maxLength(MAX_FILE_NAME_LENGTH),
  Schema.pattern(FILE_NAME_PATTERN, {
    message: () => "must be a file name: no control characters, no / or \\, not . or .."
  }),
  Schema.annotations({ identifier: "FileName", description: "A file name (no path); any Unicode text" })
)
