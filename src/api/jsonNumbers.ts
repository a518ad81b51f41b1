/**
 * Number literals a JSON body may carry only if they survive the parse. JSON.parse makes every
 * number a 64-bit float: the integer `9007199254740993` becomes 9007199254740992,
 * `12345678901234567890` 12345678901234567000 and `1e-400` 0, with no error (I-JSON, RFC 7493
 * 2.2, names the integers past 2^53 for this). The stores then keep (and the answers echo)
 * that other number, so what the gateway acknowledged would not be what was sent. Such a literal
 * is refused instead (400 naming its path), as a NUL or an unpaired surrogate is: the client can
 * send it as a string. Literals that only change their spelling (`1.0e2` is 100, `-0` is 0) are
 * the same number and pass, and so does a fraction that only rounds to the nearest float.
 *
 * Pure (no Node modules), so that the contract can use it, like ./jsonValue.ts.
 */

import { closingQuote } from "./jsonScan.js"
import { parseJson } from "./jsonParse.js"

const QUOTE = 0x22
const MINUS = 0x2d
const ZERO = 0x30
const NINE = 0x39

/** A literal's exact decimal value as `digits` and exponent (`1.50e3` → "15e2"; zero → "0"). */
const decimal = (literal: string): string => {
  const text = literal.toLowerCase()
  const negative = text.startsWith("-")
  const e = text.indexOf("e")
  const mantissa = text.slice(negative ? 1 : 0, e === -1 ? undefined : e)
  let exponent = e === -1 ? 0 : Number(text.slice(e + 1))
  const dot = mantissa.indexOf(".")
  const digits = dot === -1 ? mantissa : mantissa.slice(0, dot) + mantissa.slice(dot + 1)
  if (dot !== -1) exponent -= mantissa.length - dot - 1
  // Zeros trimmed by index, not by pattern: `/0+$/` retries from every zero of an inner run
  // (`1000…0001`), quadratic in a literal a body can make as long as it likes.
  let first = 0
  while (first < digits.length && digits.charCodeAt(first) === ZERO) first++
  let end = digits.length
  while (end > first && digits.charCodeAt(end - 1) === ZERO) end--
  const trimmed = digits.slice(first, end)
  exponent += digits.length - end
  // Zero's sign and exponent say nothing: -0, 0.0 and 0e5 are all 0 as JSON numbers.
  if (trimmed === "") return "0"
  return `${negative ? "-" : ""}${trimmed}e${exponent}`
}

/**
 * Whether JSON.parse keeps a number literal's value. A literal with a fraction or an exponent is a
 * float by its own spelling, and keeps its value when it parses to the nearest float
 * (`0.10000000000000001` is the float 0.1, as `%.17g` writers print it), unless that is no number
 * at all: past the float range (Infinity) or so small that it becomes 0. An integer literal must
 * be served back as the same integer: one up to 2^53 always is, a larger one only if the float's
 * shortest spelling is that integer (`1000000000000000000000`, `1152921504606847000`; not
 * `1152921504606846976`, though that is 2^60 exactly, since it is served as 1152921504606847000).
 */
export const isExactNumberLiteral = (literal: string): boolean => {
  const value = Number(literal)
  if (!Number.isFinite(value)) return false
  if (value === 0) return decimal(literal) === "0"
  if (/[.eE]/.test(literal)) return true
  // Past 2^53 the number is served as JSON.stringify writes it (the float's shortest spelling):
  // the same integer only if that spelling says it.
  if (Math.abs(value) <= Number.MAX_SAFE_INTEGER) return true
  const served = String(value)
  return served === literal || decimal(literal) === decimal(served)
}

/** 2^53 - 1, the largest integer every float keeps, as digits. */
const MAX_SAFE_DIGITS = Array.from(String(Number.MAX_SAFE_INTEGER), (c) => c.charCodeAt(0))

/**
 * Whether an integer literal of `digits` digits at `start` (after its sign) is at most 2^53 - 1:
 * for 16 digits compared byte by byte, without making the literal a string (an id of 16 digits
 * is common, and a body may hold hundreds of thousands of them).
 */
const safe16 = (bytes: Uint8Array, start: number, digits: number): boolean => {
  if (digits !== MAX_SAFE_DIGITS.length) return false
  const from = bytes[start] === MINUS ? start + 1 : start
  for (let k = 0; k < digits; k++) {
    const d = bytes[from + k]!
    if (d !== MAX_SAFE_DIGITS[k]) return d < MAX_SAFE_DIGITS[k]!
  }
  return true
}

const isNumberByte = (c: number | undefined): boolean =>
  c !== undefined && ((c >= ZERO && c <= NINE) || c === 0x2e || c === 0x2b || c === MINUS || c === 0x65 || c === 0x45)

/**
 * The first number literal of a body JSON.parse accepted that it does not keep exactly, or
 * undefined. One pass over the bytes: string literals are skipped by their quotes (UTF-8 or ASCII:
 * a quote or backslash byte is never part of another character), so a digit inside one is text.
 */
export const firstInexactNumber = (bytes: Uint8Array): string | undefined => {
  const n = bytes.length
  let i = 0
  while (i < n) {
    const c = bytes[i]!
    if (c === QUOTE) {
      const close = closingQuote(bytes, i)
      if (close === -1) return undefined
      i = close + 1
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const start = i
      let digits = 0
      let fraction = false
      let exponent = false
      // The exponent's magnitude, counted up to 1000 (past it nothing changes below).
      let power = 0
      for (let d = bytes[i]; isNumberByte(d); d = bytes[++i]) {
        if (d! >= ZERO && d! <= NINE) {
          if (exponent) power = Math.min(1000, power * 10 + d! - ZERO)
          else digits++
        } else if (d === 0x2e) fraction = true
        else if (d === 0x65 || d === 0x45) exponent = true
      }
      // Most literals need no look at their value: a short integer is exact; a fraction without an
      // exponent (a float's usual 17 digits) is a float unless it runs to hundreds of digits (the
      // only way it could leave the float range or round to 0); and so is one with an exponent of
      // at most 290 and at most 15 digits before it (at most 1e305, at least 1e-305 unless 0). The
      // slow path costs about 0.3 us a literal: 1,000,000 of `1e1` (4 MB) held the loop 314 ms
      // against 27 ms for their parse before this case was taken out of it.
      if (exponent ? digits <= 15 && power <= 290 : fraction ? i - start <= 300 : digits <= 15 || safe16(bytes, start, digits)) continue
      // A short literal a character at a time; a long one with `apply` on the bytes, not a spread
      // (the spread built an argument array per literal: a body of 18-digit integers took 17
      // parses' time in this loop instead of 5).
      let literal = ""
      if (i - start <= 64) for (let k = start; k < i; k++) literal += String.fromCharCode(bytes[k]!)
      else for (let k = start; k < i; k += 4096) literal += String.fromCharCode.apply(null, bytes.subarray(k, Math.min(i, k + 4096)) as unknown as Array<number>)
      if (!isExactNumberLiteral(literal)) return literal
    } else i++
  }
  return undefined
}

/** What a message says of an inexact literal (after its path). */
export const inexactNumberMessage = (literal: string): string => {
  const shown = literal.length > 64 ? `${literal.slice(0, 64)}…` : literal
  return `the number ${shown} cannot be stored exactly (JSON numbers are kept as 64-bit floats: it would become ${String(Number(literal))}); send it as a string`
}

/** A number the reviver below found inexact, in place of the number, so the walk can find it. */
class Inexact {
  constructor(readonly literal: string) {}
}

/**
 * The path of a body's first inexact number literal with what to say of it (`data.big: the number
 * ...`), or undefined when every literal is exact. `text` must be JSON that JSON.parse accepts; it
 * is parsed again here (only for a body the byte scan above found such a literal in) with a
 * reviver that reads each number's source text, so the message can name where the number is.
 */
export const inexactNumberProblem = (
  text: string,
  firstWhere: (value: unknown, found: (v: unknown) => boolean) => { readonly path: string; readonly value: unknown } | undefined
): string | undefined => {
  // Keys with escapes read as written (./jsonParse.ts): otherwise a number under one could
  // come back with no source, and pass as exact.
  const value: unknown = parseJson(text, (_key, v: unknown, context?: { readonly source?: string }) =>
    typeof v !== "number" || context?.source === undefined || isExactNumberLiteral(context.source)
      ? v
      : new Inexact(context.source))
  const found = firstWhere(value, (v) => v instanceof Inexact)
  return found === undefined ? undefined : `${found.path}: ${inexactNumberMessage((found.value as Inexact).literal)}`
}
