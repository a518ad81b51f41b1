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

/** `s` JSON-quoted, cut to `max` characters (MAX_QUOTED_CHARS unless given). */
export const quoted = (s: string, max: number = MAX_QUOTED_CHARS): string => JSON.stringify(clip(s, max))
