/**
 * Integers in query parameters: digits only (no sign, exponent, hex, spaces or empty text), as
 * the gateway's and the workspace service's lists take them. `NumberFromString` read `0x10` as
 * 16, `1e3` as 1000 and an empty `?limit=` as 0.
 */
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import * as SchemaTransformation from "effect/SchemaTransformation"

const MAX_SAFE_TEXT = String(Number.MAX_SAFE_INTEGER)

/**
 * Digits only, then a safe integer within `checks`; `what` says what it must be. Its encoded
 * side is a string, so HttpApi's query and header codecs take it as it is.
 */
export const decimalInt = (what: string, ...checks: Array<SchemaAST.Check<number>>) =>
  Schema.String.check(
    Schema.isPattern(/^\d{1,16}$/u, { message: `must be ${what}` }),
    // Past the safe integers the text is judged, not its number: 9999999999999999 reads as
    // 10000000000000000 and was refused twice, quoting a number the client never sent. Digit
    // strings of one length compare as their numbers.
    Schema.makeFilter((s: string) => !/^\d{16}$/u.test(s) || s <= MAX_SAFE_TEXT || `must be ${what}`, { toJsonSchema: () => ({}) })
  ).pipe(
    Schema.decodeTo(Schema.Finite.check(Schema.isInt(), ...checks), SchemaTransformation.numberFromString)
  )

/** An integer from `minimum` to `maximum`, written in digits. */
export const intBetween = (minimum: number, maximum: number) =>
  decimalInt(
    `an integer from ${minimum} to ${maximum}`,
    Schema.isBetween({ minimum, maximum }, { message: `must be an integer from ${minimum} to ${maximum}` })
  )
