/**
 * A request's arrival time between processes: a decision binds to the step current when the
 * gateway received the request (src/domain/engine.ts acceptSignal), so the gateway's HTTP
 * workspace client sends the time and the workspace service takes it as its request's own.
 * Only the workspace listener, behind its admin token, reads the header.
 */
import * as Effect from "effect/Effect"
import { preciseNowMs } from "../lib/preciseClock.js"
import { CurrentRequest, type RequestContext, requestContextOf } from "../observability/requestContext.js"

export const ARRIVED_AT_HEADER = "x-svc-arrived-at"

/** An arrival time header's value, when it is a finite non-negative number of ms. */
export const parseArrivedAt = (value: string | undefined): number | undefined => {
  if (value === undefined || value.length > 32) return undefined
  const n = Number(value)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/** The arrival header of the request being served; empty outside a request (background work). */
export const arrivalHeaders: Effect.Effect<Readonly<Record<string, string>>> = Effect.map(
  Effect.serviceOption(CurrentRequest),
  (current) => current._tag === "None" ? NO_HEADERS : { [ARRIVED_AT_HEADER]: String(current.value.arrivedAt) }
)

const NO_HEADERS: Readonly<Record<string, string>> = {}

/**
 * The request context of a call to the workspace API, from the headers its caller (a gateway's
 * HTTP workspace client, behind the admin token) forwards: its request id, and its arrival time
 * when given (else this server's own stamp), so a decision binds to what the gateway's client saw.
 * Never later than this server's own stamp: the request cannot have reached the gateway after it
 * reached us, and a decision waits until its arrival plus the settle time (a gateway's clock
 * seconds ahead held each decision seconds; a stamp of 1e15, for ever).
 */
export const forwardedRequestContextOf = (
  headers: Readonly<Record<string, string | undefined>>,
  stamped: number | undefined
): RequestContext => {
  const own = stamped ?? preciseNowMs()
  const forwarded = parseArrivedAt(headers[ARRIVED_AT_HEADER])
  return forwarded === undefined ? requestContextOf(headers, own) : requestContextOf(headers, Math.min(forwarded, own), true)
}
