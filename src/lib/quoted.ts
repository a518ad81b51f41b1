/**
 * A value someone sent, quoted in a message: JSON-quoted (so controls and quotes are visible)
 * and cut to MAX_QUOTED_CHARS characters plus `…`, never inside a surrogate pair, so a message
 * stays short whatever was sent.
 */

/** Characters of one client-sent value quoted in a message. */
export const MAX_QUOTED_CHARS = 64

/** `s` cut to `max` characters plus `…`, never inside a surrogate pair. */
export const clip = (s: string, max: number): string => {
  if (s.length <= max) return s
  let end = max
  const last = s.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  return `${s.slice(0, end)}…`
}

/**
 * What JSON leaves raw but a message must not carry raw: DEL and the C1 controls (U+009B starts a
 * terminal escape), the line and paragraph separators, and invisible format characters (the
 * bidirectional controls reorder the text around them) but the joiners emoji and scripts need.
 */
const INVISIBLE = /[\u007f-\u009f\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu

/** `json` (a JSON text) with the characters above as `\uXXXX` escapes: still JSON, now visible. */
export const escapeInvisible = (json: string): string =>
  json.replace(INVISIBLE, (c) => c.split("").map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""))

/** `s` JSON-quoted, cut to `max` characters (MAX_QUOTED_CHARS unless given), nothing invisible in it. */
export const quoted = (s: string, max: number = MAX_QUOTED_CHARS): string => escapeInvisible(JSON.stringify(clip(s, max)))
