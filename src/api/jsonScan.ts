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
