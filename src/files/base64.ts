import * as Effect from "effect/Effect"
import { BadRequest } from "../api/errors.js"
import { Base64Literals } from "../http/input/base64Literals.js"
import { LARGE_INPUT, oneLargeAtATime, timeSlice, yieldBeforeLarge } from "../lib/eventLoop.js"
import * as Strict from "../lib/strictBase64.js"

export { isStrictBase64 } from "../lib/strictBase64.js"

/**
 * Characters decoded per slice of a large input (a multiple of 4): about 1 ms each. A 40 MiB
 * upload decoded in one call blocked the event loop for 30-60 ms alone and 160-200 ms under
 * load (bench S8); in slices, other requests are served between them (`timeSlice`).
 */
export const DECODE_SLICE_CHARS = 1024 * 1024

/** Strict base64 of a string to bytes in slices (../lib/strictBase64.ts); undefined when not strict. */
export const decodeStrictInSlices = (
  data: string,
  sliceChars: number,
  between: Effect.Effect<void>
): Effect.Effect<Uint8Array | undefined> => Strict.decodeStrictInSlices(Strict.stringChars(data), sliceChars, between)

export const notStrict = (field: string) =>
  new BadRequest({ message: `${field}: must be strict base64 (A-Z a-z 0-9 + /, padded with =)` })

/**
 * Strict base64 to bytes, decoded natively (a Schema transformation loops in JavaScript). A
 * large upload's base64 field was decoded from the body's bytes already, never made a string
 * (../http/input/base64Literals.ts): `data` is then the placeholder the body parser put in its
 * place, and the outcome is that decode's, under the same rule and the same error.
 */
export const decodeBase64 = (field: string, data: string): Effect.Effect<Uint8Array, BadRequest> =>
  Effect.flatMap(Base64Literals, (decoded) => {
    if (decoded.has(data)) {
      const bytes = decoded.get(data)
      return bytes === undefined ? Effect.fail(notStrict(field)) : Effect.succeed(bytes)
    }
    return decodeString(field, data)
  })

const decodeString = (field: string, data: string): Effect.Effect<Uint8Array, BadRequest> =>
  data.length < LARGE_INPUT
    ? Effect.suspend(() => {
      const bytes = Buffer.from(data, "base64")
      return Strict.isStrictBase64(data, bytes) ? Effect.succeed(bytes) : Effect.fail(notStrict(field))
    })
    // A large upload: other requests go before it, and between its slices.
    : Effect.andThen(
      yieldBeforeLarge(data.length),
      Effect.flatMap(
        oneLargeAtATime(data.length, Effect.suspend(() => decodeStrictInSlices(data, DECODE_SLICE_CHARS, timeSlice()))),
        (bytes) => bytes === undefined ? Effect.fail(notStrict(field)) : Effect.succeed(bytes)
      )
    )
