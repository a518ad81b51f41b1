/**
 * A text's length in characters (Unicode code points), as JSON Schema's `maxLength` counts it
 * and as the spec's "up to 128 characters" reads: an emoji is one character, two UTF-16 units.
 * Effect's `isMaxLength` counts UTF-16 units, so 128 emoji were refused as 256 "characters".
 */
import * as Schema from "effect/Schema"

/** Code points: UTF-16 units less one per surrogate pair (a lone surrogate counts as one). */
export const charCount = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length - 1; i++) {
    const c = s.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = s.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--
        i++
      }
    }
  }
  return n
}

/** The first `max` characters (code points) of `s`: a surrogate pair is never cut in two. */
export const firstChars = (s: string, max: number): string => {
  let units = 0
  for (let n = 0; n < max && units < s.length; n++) {
    const c = s.charCodeAt(units)
    units += c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(units + 1) & 0xfc00) === 0xdc00 ? 2 : 1
  }
  return s.slice(0, units)
}

/** At most `max` characters; its 400 and published `maxLength` read as `Schema.isMaxLength`'s. */
export const isMaxChars = (max: number) =>
  Schema.makeFilter<string>((s) => s.length <= max || charCount(s) <= max, {
    expected: `a value with a length of at most ${max}`,
    toJsonSchema: () => ({ maxLength: max }),
    arbitraryConstraint: { maxLength: max }
  })

/**
 * UTF-8 bytes of `s`, without Node's Buffer (this module is also built for the browser); a lone
 * surrogate as the 3 bytes of U+FFFD, as TextEncoder writes it.
 */
export const utf8Length = (s: string): number => {
  let n = s.length
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) continue
    if (c < 0x800) n += 1
    else if (c >= 0xd800 && c <= 0xdbff && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2 // 4 bytes for the pair's two units
      i++
    } else n += 2
  }
  return n
}
