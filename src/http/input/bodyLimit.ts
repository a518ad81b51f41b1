import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import { PayloadTooLarge } from "../../api/errors.js"
import { toResponse } from "../errors/errorResponse.js"

/**
 * A declared Content-Length over the limit answers 413 before a byte is read, and closes the
 * connection so the rest of the body is not read either.
 */
export const limitDeclaredBody = (maxBodyBytes: number) => {
  const tooLarge = HttpServerResponse.setHeader(
    toResponse(new PayloadTooLarge({ message: `Request body exceeds the ${maxBodyBytes}-byte limit` })),
    "connection",
    "close"
  )
  return <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const declared = request.headers["content-length"]
      return declared !== undefined && Number(declared) > maxBodyBytes ? Effect.succeed(tooLarge) : app
    })
}
