/**
 * One place that turns any failure into the spec's error body. Handlers' typed errors pass
 * through unchanged; what Effect would answer in its own shape (decode errors, malformed JSON,
 * unknown routes) or as an empty 500 (defects) is reshaped here.
 */
import * as HttpApiError from "@effect/platform/HttpApiError"
import * as HttpServerError from "@effect/platform/HttpServerError"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type ApiError, BadRequest, InternalServerError, isApiError, NotFound, PayloadTooLarge } from "../api/errors.js"

export const toResponse = (e: ApiError): HttpServerResponse.HttpServerResponse => {
  const body: Record<string, unknown> = { statusCode: e.statusCode, message: e.message, error: e.error }
  if ("currentStatus" in e && e.currentStatus !== undefined) body.currentStatus = e.currentStatus
  if ("code" in e && e.code !== undefined) body.code = e.code
  return HttpServerResponse.unsafeJson(body, { status: e.statusCode })
}

const describeIssues = (e: HttpApiError.HttpApiDecodeError): string =>
  e.issues.length === 0
    ? e.message
    : e.issues.map((i) => `${i.path.length === 0 ? "request" : i.path.join(".")}: ${i.message}`).join("; ")

const isBodyTooLarge = (e: HttpServerError.RequestError) =>
  e.cause instanceof Error && e.cause.message === "maxBytes exceeded"

/** The ApiError a failure stands for, or None for one that must not leak (a defect). */
export const classify = (failure: unknown): Option.Option<ApiError> => {
  if (isApiError(failure)) return Option.some(failure)
  if (failure instanceof HttpApiError.HttpApiDecodeError) {
    return Option.some(new BadRequest({ message: describeIssues(failure) }))
  }
  if (HttpServerError.isServerError(failure)) {
    if (failure._tag === "RouteNotFound") {
      return Option.some(
        new NotFound({ message: `Cannot ${failure.request.method} ${failure.request.url.split("?", 1)[0]}` })
      )
    }
    if (failure._tag === "RequestError") {
      return Option.some(
        isBodyTooLarge(failure)
          ? new PayloadTooLarge({ message: "Request body exceeds the size limit" })
          : new BadRequest({ message: "Malformed request body: expected valid JSON" })
      )
    }
  }
  return Option.none()
}

const internal = new InternalServerError({ message: "Internal server error" })

/** Wraps an HttpApp so that every failure, typed or not, answers in the spec's shape. */
export const shapeErrors = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, never, R> =>
  Effect.catchAllCause(app, (cause) => {
    if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    // Body-read failures arrive as defects (the builder `orDie`s them); look at both channels.
    const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
    const known = Option.flatMap(failure, classify)
    if (Option.isSome(known)) return Effect.succeed(toResponse(known.value))
    return Effect.as(Effect.logError("Unhandled failure", cause), toResponse(internal))
  })
