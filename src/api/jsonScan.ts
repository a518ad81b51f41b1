/**
 * Scanning JSON text as bytes without parsing it (the number check, the long-string cut). Pure
 * (no Node modules), so that the contract can use it.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether the quote at `quote` is escaped: an odd run of backslashes stands before it. */
const escapedQuote = (bytes: Uint8Array, quote: number): boolean => {
  let n = 0
  for (let i = quote - 1; i >= 0 && bytes[i] === BACKSLASH; i--) n++
  return n % 2 === 1
}

/** The quote that closes the string literal opened at `open`, or -1 when none does. */
export const closingQuote = (bytes: Uint8Array, open: number): number => {
  let close = bytes.indexOf(QUOTE, open + 1)
  while (close !== -1 && escapedQuote(bytes, close)) close = bytes.indexOf(QUOTE, close + 1)
  return close
}

const COMMA = 0x2c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * How many values (objects, arrays, strings, numbers, true, false, null; not keys) a JSON text
 * holds, counted from its bytes without parsing it, stopping once past `max` (then max + 1). For
 * valid JSON it is exact: the root, plus each container's elements (its commas, and one more when
 * it is not empty). Invalid JSON gets some count; its parse refuses it after.
 */
export const countJsonValues = (bytes: Uint8Array, max: number): number => {
  let values = 1
  // After an opening bracket: whether the next byte that is not whitespace starts an element.
  let opened = false
  const n = bytes.length
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09) continue
    if (opened) {
      opened = false
      if (b !== CLOSE_BRACE && b !== CLOSE_BRACKET) values++
    }
    if (b === QUOTE) {
      const close = closingQuote(bytes, i)
      if (close === -1) return values
      i = close
    } else if (b === COMMA) {
      values++
    } else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      opened = true
      continue
    }
    if (values > max) return values
  }
  return values
}
