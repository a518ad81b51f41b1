/**
 * What identifies a request across processes: its request id (`x-request-id`) and, when the
 * caller sent one, its W3C trace context (`traceparent`, `tracestate`).
 *
 * - An `x-request-id` from the edge is kept when it is short visible ASCII (1-128 characters
 *   from `!` to `~`); anything else is replaced by a fresh UUID. The id is echoed on the
 *   response and sent on every call to the upstream workspace.
 * - A valid `traceparent` is passed on to the upstream unchanged when this process does not
 *   trace (it is then a transparent hop); when it traces, the HTTP client sends its own span's
 *   `traceparent`, a child of the caller's (src/observability/tracing.ts).
 *
 * The request's context lives in the context of the request's fiber and every fiber it forks.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { randomFillSync } from "node:crypto"
import { preciseNowMs } from "../lib/preciseClock.js"

export const REQUEST_ID_HEADER = "x-request-id"
export const MAX_REQUEST_ID_LENGTH = 128

const VISIBLE_ASCII = /^[\x21-\x7e]+$/

/** An edge-supplied request id we keep: 1-128 visible ASCII characters (no spaces, no controls). */
export const isValidRequestId = (value: string): boolean =>
  value.length > 0 && value.length <= MAX_REQUEST_ID_LENGTH && VISIBLE_ASCII.test(value)

/**
 * A random (version 4) UUID, as `crypto.randomUUID` makes, but as one string: Node's builds it
 * from 20 concatenated pieces (about 600 bytes of garbage per request id, bench/PROFILE.md).
 * The bytes come from a pool of 4 KiB filled by the CSPRNG, 16 per id and never reused.
 */
const POOL_IDS = 256
const pool = Buffer.alloc(16 * POOL_IDS)
let poolNext = POOL_IDS
const text = Buffer.alloc(36, "-")
const HEX = Buffer.from("0123456789abcdef", "latin1")
/** Where each of the 16 bytes goes in the 36 characters (the dashes stay). */
const AT = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34]

export const newRequestId = (): string => {
  if (poolNext === POOL_IDS) {
    randomFillSync(pool)
    poolNext = 0
  }
  const from = 16 * poolNext++
  for (let i = 0; i < 16; i++) {
    let byte = pool[from + i]!
    if (i === 6) byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // variant 10
    text[AT[i]!] = HEX[byte >> 4]!
    text[AT[i]! + 1] = HEX[byte & 0x0f]!
  }
  return text.toString("latin1", 0, 36)
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/
const ZERO_TRACE = "00000000000000000000000000000000"
const ZERO_SPAN = "0000000000000000"

/**
 * A `traceparent` header (W3C Trace Context level 1) when valid, else undefined: version not
 * `ff`, trace id and parent id not all zeros; version 00 has exactly four fields, later
 * versions may append more.
 */
export const parseTraceparent = (value: string | undefined): { readonly traceId: string; readonly spanId: string } | undefined => {
  if (value === undefined || value.length > 512) return undefined
  const m = TRACEPARENT.exec(value.trim())
  if (m === null) return undefined
  const [, version, traceId, spanId, , rest] = m
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return undefined
  return { traceId: traceId!, spanId: spanId! }
}

/** One request's identity, shared by its log line, its metrics and its upstream calls. */
export class RequestContext {
  /** The route template the router matched (set by requests.ts's RouteCaptureLive); undefined before, or when none. */
  route: string | undefined = undefined
  constructor(
    readonly requestId: string,
    /** The caller's `traceparent`, when valid. */
    readonly traceparent: string | undefined,
    /** The caller's `tracestate`, kept only beside a valid traceparent. */
    readonly tracestate: string | undefined,
    /** The caller's trace id (from traceparent), for the log line. */
    readonly traceId: string | undefined,
    /**
     * When the request arrived (its headers were read), wall-clock ms with sub-ms precision: a
     * decision applies to the step current then (src/domain/engine.ts acceptSignal).
     */
    readonly arrivedAt: number = preciseNowMs(),
    /**
     * Whether another process stamped `arrivedAt` (a gateway in front of the workspace API,
     * src/services/arrival.ts): its decisions wait as long as replicas' do.
     */
    readonly arrivalForwarded: boolean = false
  ) {}
}

/**
 * The request being served, in the context of its fiber (and of the fibers it forks): one
 * context change per request, together with the route capture (./requests.ts).
 */
export class CurrentRequest extends Context.Service<CurrentRequest, RequestContext>()("observability/CurrentRequest") {}

/** The request context for incoming headers: the edge's id when acceptable, else a new one. */
export const requestContextOf = (
  headers: Readonly<Record<string, string | undefined>>,
  /** When the server stamped its arrival (src/http/server/arrival.ts); now when it did not. */
  arrivedAt: number = preciseNowMs(),
  arrivalForwarded = false
): RequestContext => {
  const edgeId = headers[REQUEST_ID_HEADER]
  const requestId = edgeId !== undefined && isValidRequestId(edgeId) ? edgeId : newRequestId()
  const traceparent = headers["traceparent"]
  const trace = parseTraceparent(traceparent)
  if (trace === undefined) return new RequestContext(requestId, undefined, undefined, undefined, arrivedAt, arrivalForwarded)
  const tracestate = headers["tracestate"]
  return new RequestContext(
    requestId,
    traceparent!.trim(),
    tracestate !== undefined && tracestate.length <= 512 && VISIBLE_OR_SPACE.test(tracestate) ? tracestate : undefined,
    trace.traceId,
    arrivedAt,
    arrivalForwarded
  )
}

const VISIBLE_OR_SPACE = /^[\x20-\x7e]*$/

/**
 * The headers a call to the upstream workspace carries for the current request: its request
 * id, and the caller's trace context unless `tracing` (then the HTTP client's own span sets
 * traceparent). Empty outside a request (background work such as the outbox relay).
 */
export const upstreamHeaders = (tracing: boolean): Effect.Effect<Readonly<Record<string, string>>> =>
  Effect.map(Effect.serviceOption(CurrentRequest), (current) => {
    if (current._tag === "None") return NO_HEADERS
    const request = current.value
    const own = { [REQUEST_ID_HEADER]: request.requestId }
    if (tracing || request.traceparent === undefined) return own
    return request.tracestate === undefined
      ? { ...own, traceparent: request.traceparent }
      : { ...own, traceparent: request.traceparent, tracestate: request.tracestate }
  })

const NO_HEADERS: Readonly<Record<string, string>> = {}
