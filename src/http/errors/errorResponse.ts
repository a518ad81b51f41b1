/**
 * One place that turns any failure into the spec's error body. Handlers' typed errors pass
 * through unchanged; what Effect would answer in its own shape (decode errors, malformed JSON,
 * unknown routes) or as an empty 500 (defects) is reshaped here.
 *
 * Messages are bounded (./errorMessages.ts): an error body never grows with the input.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as Option from "effect/Option"
import {
  type ApiError,
  BadRequest,
  InternalServerError,
  isApiError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge
} from "../../api/errors.js"
import { type ApiRoutes, explainUnrouted, matchPath } from "./unrouted.js"
import { malformedPercentEncoding } from "./percentEncoding.js"
import { MAX_PATH_PARAM_LENGTH } from "../server/ServerLimits.js"
import { clip } from "../../lib/quoted.js"
import { redactLinkPath } from "../../api/linkPath.js"
import { errorBody } from "./errorBody.js"
import { boundMessage, describeIssues } from "./errorMessages.js"

/** Characters of the request path quoted in a routing message (404, 405). */
export const MAX_QUOTED_PATH_CHARS = 128
export const toResponse = (e: ApiError): HttpServerResponse.HttpServerResponse => {
  const body: Record<string, unknown> = { ...errorBody(e.statusCode, e.error, boundMessage(e.message)) }
  if ("currentStatus" in e && e.currentStatus !== undefined) body.currentStatus = e.currentStatus
  if ("code" in e && e.code !== undefined) body.code = e.code
  const allow = e instanceof MethodNotAllowed && e.allow !== undefined ? { allow: e.allow.join(", ") } : undefined
  // A 503 is temporary by definition (a busy store, an upstream refusing): say when to retry.
  const headers = e.statusCode === 503 ? { "retry-after": RETRY_AFTER_SECONDS } : allow
  return HttpServerResponse.jsonUnsafe(body, { status: e.statusCode, ...(headers !== undefined ? { headers } : {}) })
}

/** Retry-After (seconds) on every 503 answer. */
export const RETRY_AFTER_SECONDS = "1"


/** A request the router found no route for, judged against the API being served (when known). */
const unrouted = (request: { readonly method: string; readonly url: string }, api: ApiRoutes | undefined) => {
  const path = request.url.split("?", 1)[0]!
  // A decision link's path is its credential: never quoted back (nor cached with it by whoever relays the answer).
  const quoted = clip(redactLinkPath(path), MAX_QUOTED_PATH_CHARS)
  const malformed = malformedPercentEncoding(path)
  if (malformed !== undefined) {
    return new BadRequest({
      message: `Malformed request path: invalid percent-encoding ${
        JSON.stringify(malformed)
      } (expected %XX escapes of UTF-8 bytes) in ${quoted}`
    })
  }
  if (api !== undefined) {
    const why = explainUnrouted(api, request.method, request.url, MAX_PATH_PARAM_LENGTH)
    if (why._tag === "MethodNotAllowed") {
      return new MethodNotAllowed({
        message: `Method ${request.method} is not allowed on ${quoted}; allowed: ${why.allow.join(", ")}`,
        allow: why.allow
      })
    }
    if (why._tag === "ParamTooLong") {
      return new BadRequest({
        message: `${why.name}: path parameter is ${why.length} characters long; at most ${MAX_PATH_PARAM_LENGTH} are accepted`
      })
    }
  }
  return new NotFound({ message: `Cannot ${request.method} ${quoted}` })
}

/**
 * The ApiError a failure stands for, or None for one that must not leak (a defect). `api`, the
 * HttpApi being served, turns an unrouted request into a 405 (or a 400) where its definition
 * says so; without it every unrouted request is a 404.
 */
export const classify = (failure: unknown, api?: ApiRoutes): Option.Option<ApiError> => {
  if (isApiError(failure)) return Option.some(failure)
  // A request part that does not decode (the builder fails with it as a defect); an encoding
  // failure of our own answer (Body, ResponseHeaders) is a bug: a 500.
  if (HttpApiError.HttpApiSchemaError.is(failure)) {
    return failure.kind === "Body" || failure.kind === "ResponseHeaders"
      ? Option.none()
      : Option.some(new BadRequest({ message: describeIssues(failure.cause) }))
  }
  if (HttpApiError.HttpApiPayloadTooLarge.is(failure)) {
    return Option.some(new PayloadTooLarge({ message: "Request body exceeds the size limit" }))
  }
  if (HttpServerError.isHttpServerError(failure)) {
    const reason = failure.reason
    if (reason._tag === "RouteNotFound") return Option.some(unrouted(reason.request, api))
    if (reason._tag === "RequestParseError") {
      return Option.some(
        reason.reason === "BodyTooLarge"
          ? new PayloadTooLarge({ message: "Request body exceeds the size limit" })
          : new BadRequest({ message: "Malformed request body: expected valid JSON" })
      )
    }
  }
  return Option.none()
}

const internal = new InternalServerError({ message: "Internal server error" })

/** The first failure of a cause, else its first defect (decode and body-read failures are defects). */
const firstFailure = (cause: Cause.Cause<unknown>): Option.Option<unknown> => {
  let defect: Option.Option<unknown> = Option.none()
  for (const reason of cause.reasons) {
    if (reason._tag === "Fail") return Option.some(reason.error)
    if (reason._tag === "Die" && Option.isNone(defect)) defect = Option.some(reason.defect)
  }
  return defect
}

/**
 * A 503 an endpoint of `api` answered gets Retry-After, as toResponse gives every 503: Effect 4's
 * HttpApiBuilder encodes an endpoint's declared errors itself (ServiceUnavailable among them),
 * so they reach shapeErrors as answers, not failures. An endpoint answers 503 only by such an
 * error; the other routes' 503s (/readyz, the console) stay as they are.
 */
const retryAfterOnApi503 = (
  response: HttpServerResponse.HttpServerResponse,
  api: ApiRoutes | undefined
): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  response.status !== 503 || api === undefined || response.headers["retry-after"] !== undefined
    ? Effect.succeed(response)
    : Effect.map(Effect.serviceOption(HttpServerRequest.HttpServerRequest), (request) =>
      Option.isSome(request) && matchPath(api, request.value.url).length > 0
        ? HttpServerResponse.setHeader(response, "retry-after", RETRY_AFTER_SECONDS)
        : response)

/**
 * Wraps an HttpApp so that every failure, typed or not, answers in the spec's shape. `api`, the
 * HttpApi being served, judges an unrouted request (405 or 400 where its definition says so);
 * without it every unrouted request is a 404. (Effect 4 has no served-API service in the
 * request's context to find it by.)
 */
export const shapeErrors = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  api?: ApiRoutes
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.catchCause(Effect.flatMap(app, (response) => retryAfterOnApi503(response, api)), (cause) => {
    // Interrupted (the client went away, or the drain cut it): no one to answer, whatever else
    // failed meanwhile. A store query that failed as its request was interrupted (a replica
    // resumed after its sessions were ended) was logged as an unhandled failure with its stack.
    if (Cause.hasInterrupts(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const known = Option.flatMap(firstFailure(cause), (f) => classify(f, api))
    if (Option.isSome(known)) return Effect.succeed(toResponse(known.value))
    return Effect.as(Effect.logError("Unhandled failure", cause), toResponse(internal))
  })
