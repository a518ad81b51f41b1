/**
 * The body of every non-2xx answer, `{statusCode, message, error}` (README: Errors), built here
 * and nowhere else: as JSON text for what writes to the socket itself (./nodeServer.ts), as a
 * response for the rest. Typed errors (src/api/errors.ts) go through ./errorResponse.ts's
 * toResponse, which builds the same body, bounds its message and adds their extra fields.
 */
import * as HttpServerResponse from "effect/http/HttpServerResponse"

export interface ErrorBody {
  readonly statusCode: number
  readonly message: string
  /** The status's reason phrase ("Not Found"). */
  readonly error: string
}

export const errorBody = (statusCode: number, error: string, message: string): ErrorBody => ({ statusCode, message, error })

/** The body as JSON text, for an answer written to the socket directly. */
export const errorJson = (statusCode: number, error: string, message: string): string =>
  JSON.stringify(errorBody(statusCode, error, message))

/** The answer: status `statusCode`, the body as JSON, and `headers` when given. */
export const errorResponse = (
  statusCode: number,
  error: string,
  message: string,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(
    errorBody(statusCode, error, message),
    headers === undefined ? { status: statusCode } : { status: statusCode, headers }
  )
