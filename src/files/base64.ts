import * as Effect from "effect/Effect"
import { BadRequest } from "../api/errors.js"

// Buffer.from silently skips characters outside the alphabet; strictness needs the check first.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/** Strict base64 to bytes, decoded natively (a Schema transformation loops in JavaScript). */
export const decodeBase64 = (field: string, data: string): Effect.Effect<Uint8Array, BadRequest> =>
  BASE64.test(data)
    ? Effect.succeed(Buffer.from(data, "base64"))
    : Effect.fail(new BadRequest({ message: `${field}: must be strict base64 (A-Z a-z 0-9 + /, padded with =)` }))
