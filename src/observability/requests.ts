/**
 * Per request: its id and trace context (./requestContext.ts), its route template, one log
 * line and its metrics, once the response has been sent (or the client went away).
 *
 * The route template comes from the router itself: a route middleware (`RouteCaptureLive`,
 * provided to every route layer) writes the matched route's path into the request's context
 * when the route starts, so the template costs nothing extra to learn and no path is matched
 * twice. (Effect 4's router records `http.route` only on a span of a real tracer.)
 *
 * The line is written when Node closes the response: its duration covers the whole body (a
 * streamed download included), and a request the client abandoned is logged as status 499 with
 * `aborted: true`.
 */
import { absoluteFormPath, redactLinkPath } from "../api/linkPath.js"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as LogLevel from "effect/LogLevel"
import * as Tracer from "effect/Tracer"
import type * as http from "node:http"
import { IncomingMessage } from "node:http"
import { arrivalOf } from "../http/server/arrival.js"
import { formatLine, type LogSettings } from "./logging.js"
import { recordHttpRequest } from "./metrics.js"
import { CurrentRequest, newRequestId, REQUEST_ID_HEADER, type RequestContext, requestContextOf } from "./requestContext.js"
import { type MalformedAnswer, REQUEST_ID_OF } from "../http/server/nodeServer.js"

/**
 * The route middleware that tells the request's context which route matched: provide its layer
 * to the layers that add routes (a route added without it is logged as `unmatched`).
 */
export const RouteCaptureLive = HttpRouter.middleware((effect) =>
  Effect.withFiber((fiber) => {
    const rc = Context.getOrUndefined(fiber.context, CurrentRequest)
    if (rc !== undefined && rc.route === undefined) {
      rc.route = Context.getUnsafe(fiber.context, HttpRouter.RouteContext).route.path
    }
    return effect
  })
).layer

/** What one request's line and metrics are made of. */
export interface RequestRecord {
  readonly requestId: string
  readonly traceId: string | undefined
  readonly method: string
  /** The route template, or undefined when no route matched. */
  readonly route: string | undefined
  readonly path: string
  readonly status: number
  readonly durationMs: number
  readonly bytes: number
  readonly aborted: boolean
  /** A 503 that says when to retry (Retry-After): load shed on purpose, not a failure. */
  readonly shed?: boolean
}

/** A line's level: a failure is an error; a request shed on purpose (503 with Retry-After) a warning. */
const levelOf = (record: RequestRecord) => (record.status < 500 ? "info" : record.shed === true ? "warn" : "error")

export interface RequestObserverOptions {
  /** Where log lines go; undefined writes none (metrics and ids still happen). */
  readonly line?: ((text: string) => void) | undefined
  readonly log?: LogSettings | undefined
}

/** The path without its query; a decision link's token (a credential) never reaches a log line. */
const pathOf = (url: string) => {
  const q = url.indexOf("?")
  return redactLinkPath(q === -1 ? url : url.slice(0, q))
}

const round1 = (ms: number) => Math.round(ms * 10) / 10

/**
 * The ISO time of `ms`, formatted once per millisecond: under load several request lines share
 * one (a Date and its string per line were a tenth of the request line's cost).
 */
let isoMs = -1
let isoText = ""
const isoOf = (ms: number): string => {
  if (ms !== isoMs) {
    isoMs = ms
    isoText = new Date(ms).toISOString()
  }
  return isoText
}

// Printable ASCII without a quote or backslash: the JSON string is the text in quotes.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const jsonString = (s: string): string => (PLAIN.test(s) ? `"${s}"` : JSON.stringify(s))
const jsonNumber = (n: number): string => (Number.isFinite(n) ? String(n) : "null")

/**
 * The JSON line, written out field by field: exactly what JSON.stringify of the record object
 * gives (test/http/requestLine.test.ts holds it to that). In the process, JSON.stringify of the
 * record cost about 4 us of a health check's 39 (SVC_LOG_LEVEL=none 33 us; bench/PROFILE.md).
 */
const jsonRequestLine = (time: string, record: RequestRecord): string =>
  `{"time":"${time}","level":"${levelOf(record)}","msg":"request","requestId":${jsonString(record.requestId)},` +
  `"method":${jsonString(record.method)},"route":${record.route === undefined ? "null" : jsonString(record.route)},` +
  `"path":${jsonString(record.path)},"status":${jsonNumber(record.status)},"durationMs":${jsonNumber(record.durationMs)},` +
  `"bytes":${jsonNumber(record.bytes)}${record.traceId === undefined ? "" : `,"traceId":${jsonString(record.traceId)}`}` +
  `${record.aborted ? ',"aborted":true' : ""}}`

/** The request line for `record` in the configured format (at `date`, default now). */
export const formatRequestLine = (format: LogSettings["format"], record: RequestRecord, date?: Date): string =>
  format === "json"
    ? jsonRequestLine(isoOf(date === undefined ? Date.now() : date.getTime()), record)
    : formatLine(
      format,
      date ?? new Date(),
      levelOf(record),
      `${record.method} ${record.path} ${record.status} ${record.durationMs}ms ${record.bytes}B`,
      [
        ["route", record.route ?? "-"],
        ["id", record.requestId],
        ["trace", record.traceId],
        ["aborted", record.aborted ? true : undefined]
      ]
    )

const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest): http.ServerResponse | undefined => {
  try {
    const res = NodeHttpServerRequest.toServerResponse(request) as http.ServerResponse | undefined
    return res !== undefined && typeof (res as { once?: unknown }).once === "function" ? res : undefined
  } catch {
    return undefined
  }
}

/** The body length an Effect response declares (undefined: a stream of unknown length). */
const declaredBytes = (response: HttpServerResponse.HttpServerResponse): number | undefined => {
  const body = response.body
  switch (body._tag) {
    case "Empty":
      return 0
    case "Uint8Array":
      // Not `body.body.byteLength`: a text body is kept as its text (the adapter writes the
      // string), and reading `.body` encodes it to bytes only to count them (a 10 KB list's copy).
      return body.contentLength
    case "Raw":
    case "Stream":
      return body.contentLength
    default:
      return undefined
  }
}

/**
 * Body bytes of a finished response: its declared length (what Node sent for a complete
 * response), else what went over the connection (a chunked body; headers included).
 */
const bodyBytes = (method: string, res: http.ServerResponse, declared: number | undefined, wireBytes: number): number => {
  if (method === "HEAD" || res.statusCode === 204 || res.statusCode === 304) return 0
  if (declared !== undefined) return res.writableFinished ? declared : Math.min(declared, wireBytes)
  const header = res.getHeader("content-length")
  if (header !== undefined && Number.isFinite(Number(header))) return Number(header)
  return wireBytes
}

/** A request's metrics, and its line when the level admits it. */
const makeEmit = (options: RequestObserverOptions) => {
  const line = options.line
  const log = options.log
  const infoOn = log !== undefined && LogLevel.isGreaterThanOrEqualTo("Info", log.level)
  const warnOn = log !== undefined && LogLevel.isGreaterThanOrEqualTo("Warn", log.level)
  const errorOn = log !== undefined && LogLevel.isGreaterThanOrEqualTo("Error", log.level)
  const on = { info: infoOn, warn: warnOn, error: errorOn }
  return (record: RequestRecord) => {
    recordHttpRequest(record.method, record.route, record.status, record.durationMs / 1000)
    if (line === undefined || log === undefined) return
    if (on[levelOf(record)]) line(formatRequestLine(log.format, record))
  }
}

/**
 * For the answers the Node server gives before the application sees the request
 * (src/http/server/nodeServer.ts: a declared body over the limit, the body budget full, the
 * connection cap, too many headers, a malformed escape, start-up and shutdown): called before
 * the answer is written, it gives the answer the request's id (x-request-id) and, once the
 * response closes, the same line and metrics as any request (route unmatched). Without it a
 * flood of refused uploads left no trace in the log.
 */
export const observeOwnAnswers = (options: RequestObserverOptions = {}) => {
  const emit = makeEmit(options)
  return (req: http.IncomingMessage, res: http.ServerResponse): void => {
    const started = performance.now()
    const rc = requestContextOf(req.headers as Record<string, string | undefined>, arrivalOf(req))
    res.setHeader(REQUEST_ID_HEADER, rc.requestId)
    const method = req.method ?? "GET"
    const path = pathOf(absoluteFormPath(req.url ?? "/"))
    const closed = () => {
      const sent = res.headersSent
      emit({
        requestId: rc.requestId,
        traceId: rc.traceId,
        method,
        route: undefined,
        path,
        status: sent ? res.statusCode : 499,
        durationMs: round1(performance.now() - started),
        bytes: sent ? bodyBytes(method, res, undefined, 0) : 0,
        aborted: !res.writableFinished,
        shed: sent && res.statusCode === 503 && res.getHeader("retry-after") !== undefined
      })
    }
    // Called for a request whose client already left (it gave up waiting for room for its body):
    // its line now, as a 499.
    if (res.closed) closed()
    else res.on("close", closed)
  }
}

/**
 * For the answers to requests Node's parser refused (src/http/server/nodeServer.ts: malformed,
 * headers too large, too slow): a fresh id for the answer, and at once the line and metrics of
 * any request (route unmatched), with the method and path when the request line was whole.
 */
export const observeMalformed = (options: RequestObserverOptions = {}): MalformedAnswer => {
  const emit = makeEmit(options)
  return (status, rawPacket, bytes) => {
    const requestId = newRequestId()
    const line = Buffer.isBuffer(rawPacket) ? REQUEST_LINE.exec(rawPacket.toString("latin1", 0, MAX_REQUEST_LINE)) : null
    emit({
      requestId,
      traceId: undefined,
      method: line?.[1] ?? "-",
      route: undefined,
      path: line === null ? "-" : pathOf(absoluteFormPath(line[2]!)),
      status,
      durationMs: 0,
      bytes,
      aborted: false
    })
    return requestId
  }
}

// A whole request line, in visible ASCII only (nothing that could forge a log line), as read.
const MAX_REQUEST_LINE = 8192
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}) ([\x21-\x7e]{1,8000}) HTTP\/\d\.\d\r?\n/

/**
 * The middleware: every request gets an id (echoed as x-request-id), its context for upstream
 * calls and logs, a log line (when `options.line` is given and the level admits it) and its
 * metrics.
 */
export const observeRequests = (options: RequestObserverOptions = {}) => {
  const emit = makeEmit(options)

  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.withFiber((fiber) => {
      const context = fiber.context
      const request = Context.getUnsafe(context, HttpServerRequest.HttpServerRequest)
      const started = performance.now()
      const incoming = NodeHttpServerRequest.toIncomingMessage(request)
      // Node's own header record when there is one (the same lower-cased names, duplicates joined
      // the same way for the headers read here): Effect's `request.headers` copies it first.
      const rc: RequestContext = incoming instanceof IncomingMessage
        ? requestContextOf(incoming.headers as Record<string, string | undefined>, arrivalOf(incoming))
        : requestContextOf(request.headers)
      const parent = Context.getOrUndefined(context, Tracer.ParentSpan)
      const realSpan = parent !== undefined && parent._tag === "Span" ? parent : undefined
      const method = request.method
      const path = pathOf(request.url)
      const traceId = rc.traceId ?? realSpan?.traceId
      /** The request's line and metrics, once its outcome is known. */
      const finished = (status: number, bytes: number, aborted: boolean, shed: boolean) =>
        emit({
          requestId: rc.requestId,
          traceId,
          method,
          route: rc.route,
          path,
          status,
          durationMs: round1(performance.now() - started),
          bytes,
          aborted,
          shed
        })

      // updateContext, not provideService: the same context change without a `dual` wrapper per call.
      const inner = Effect.updateContext(app, (context: Context.Context<R>) => Context.add(context, CurrentRequest, rc) as Context.Context<R>)
      /** Body bytes as the response declares them; undefined for a body of unknown length. */
      let declared: number | undefined
      const withId = Effect.map(inner, (response) => {
        declared = declaredBytes(response)
        return HttpServerResponse.setHeader(response, REQUEST_ID_HEADER, rc.requestId)
      })

      const res = nodeResponseOf(request)
      if (res === undefined) {
        // Not a Node server: the line when the response is ready, without the body's time.
        return Effect.onExit(withId, (exit) =>
          Effect.sync(() =>
            finished(
              Exit.isSuccess(exit) ? exit.value.status : Exit.hasInterrupts(exit) ? 499 : 500,
              Exit.isSuccess(exit) ? declaredBytes(exit.value) ?? 0 : 0,
              Exit.isFailure(exit) && Exit.hasInterrupts(exit),
              Exit.isSuccess(exit) && exit.value.status === 503 && exit.value.headers["retry-after"] !== undefined
            )
          ))
      }
      // The id an answer the server writes itself to this request carries (a parser error in its body).
      ;(res as { [REQUEST_ID_OF]?: string })[REQUEST_ID_OF] = rc.requestId
      const socket = res.socket
      const wireBefore = socket?.bytesWritten ?? 0
      // `on`, not `once`: a response closes once, and `once` wraps every listener.
      res.on("close", () => {
        const sent = res.headersSent
        finished(
          sent ? res.statusCode : 499,
          sent ? bodyBytes(method, res, declared, (socket?.bytesWritten ?? wireBefore) - wireBefore) : 0,
          !res.writableFinished,
          sent && res.statusCode === 503 && res.getHeader("retry-after") !== undefined
        )
      })
      return withId
    })
}
