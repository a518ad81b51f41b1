/**
 * One place that turns any failure into the spec's error body. Handlers' typed errors pass
 * through unchanged; what Effect would answer in its own shape (decode errors, malformed JSON,
 * unknown routes) or as an empty 500 (defects) is reshaped here.
 *
 * Messages are bounded: an error body never grows with the input. A value the client sent is
 * quoted at most once per problem and at most MAX_QUOTED_CHARS characters long (then `…`); a
 * decode error lists at most MAX_LISTED_ISSUES problems ("and K more"); and any message is cut
 * at MAX_MESSAGE_CHARS.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as HttpServerError from "effect/http/HttpServerError"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiError from "effect/http-api/HttpApiError"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import {
  type ApiError,
  BadRequest,
  InternalServerError,
  isApiError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge
} from "../../api/errors.js"
import { issueProblems } from "../../api/issues.js"
import { type ApiRoutes, explainUnrouted, malformedPercentEncoding, matchPath } from "./unrouted.js"
import { MAX_PATH_PARAM_LENGTH } from "../server/ServerLimits.js"
import { clip, MAX_QUOTED_CHARS } from "../../lib/quoted.js"
import { errorBody } from "./errorBody.js"

/** Characters of the request path quoted in a routing message (404, 405). */
export const MAX_QUOTED_PATH_CHARS = 128
/** Problems listed in one decode-error message; the rest are counted. */
export const MAX_LISTED_ISSUES = 10
/** Characters of one listed problem (its field path and what was wrong). */
export const MAX_ISSUE_CHARS = 300
/** Characters of any error message. */
export const MAX_MESSAGE_CHARS = 4096

/** The inside of a JSON string literal cut to `max` characters, never inside an escape sequence. */
const clipJsonInner = (inner: string, max: number): string => {
  if (inner.length <= max) return inner
  let cut = inner.slice(0, max)
  // A trailing backslash run of odd length starts an escape that the cut broke.
  const run = /\\+$/.exec(cut)?.[0].length ?? 0
  if (run % 2 === 1) cut = cut.slice(0, -1)
  else {
    const unicode = /\\u[0-9a-fA-F]{0,3}$/.exec(cut)
    if (unicode !== null && ((/\\*$/.exec(cut.slice(0, unicode.index))?.[0].length ?? 0) % 2 === 0)) {
      cut = cut.slice(0, unicode.index)
    }
  }
  const last = cut.charCodeAt(cut.length - 1)
  if (last >= 0xd800 && last <= 0xdbff) cut = cut.slice(0, -1)
  return `${cut}…`
}

/**
 * Every double-quoted string in `message` (how the schema formatter and our own messages quote
 * values) cut to MAX_QUOTED_CHARS. One linear scan: a quote left open (a message that was cut)
 * runs to the end and is cut the same way.
 */
const clipQuotedStrings = (message: string): string => {
  let out = ""
  let from = 0
  for (;;) {
    const open = message.indexOf("\"", from)
    if (open === -1) return out + message.slice(from)
    out += message.slice(from, open + 1)
    let close = open + 1
    while (close < message.length && message.charCodeAt(close) !== 34) close += message.charCodeAt(close) === 92 ? 2 : 1
    const inner = message.slice(open + 1, Math.min(close, message.length))
    const clipped = inner.length > MAX_QUOTED_CHARS ? clipJsonInner(inner, MAX_QUOTED_CHARS) : inner
    if (close >= message.length) return out + clipped
    out += `${clipped}"`
    from = close + 1
  }
}

/** Any message as it may leave: quoted values cut, the whole bounded. */
export const boundMessage = (message: string): string =>
  clip(clipQuotedStrings(message), MAX_MESSAGE_CHARS)

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

/** A value as the schema formatter printed it (`"text"`, `123`, `{"a":1}`), cut to MAX_QUOTED_CHARS. */
const clipActual = (actual: string): string =>
  actual.startsWith("\"") && actual.endsWith("\"") && actual.length >= 2
    ? `"${clipJsonInner(actual.slice(1, -1), MAX_QUOTED_CHARS)}"`
    : clip(actual, MAX_QUOTED_CHARS)

interface Problem {
  readonly path: string
  /** What was expected, when the formatter said `Expected <x>, actual <v>`. */
  readonly expected: Array<string>
  readonly actual: string | undefined
  /** Any other message (`is missing`, a refinement's own message, ...). */
  readonly other: string | undefined
}

/** One issue as Schema's formatter gives it: where, and what is wrong. */
interface IssueLine {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** Schema's problems in the words the API has always used (see `issueProblems`). */
const issueLines = (issue: SchemaIssue.Issue): ReadonlyArray<IssueLine> => issueProblems(issue)

/**
 * One line per field path (and value): the formatter reports a union once per member (a
 * literal union, or `T | undefined` for every optional field), each with the whole value; they
 * become one `Expected A | B, actual <value>` with the value quoted once, cut short. `undefined`
 * is dropped from the alternatives: JSON cannot send it.
 */
const problemsOf = (issues: ReadonlyArray<IssueLine>): Array<Problem> => {
  const problems: Array<Problem> = []
  const byKey = new Map<string, Problem>()
  for (const issue of issues) {
    const path = issue.path.length === 0
      ? "request"
      : issue.path.map((segment) => clip(String(segment), MAX_QUOTED_CHARS)).join(".")
    const message = issue.message
    const at = message.startsWith("Expected ") ? message.indexOf(", actual ") : -1
    if (at === -1) {
      const other = clipQuotedStrings(message)
      const key = `${path}\u0000\u0001${other}`
      if (!byKey.has(key)) {
        const problem = { path, expected: [], actual: undefined, other }
        byKey.set(key, problem)
        problems.push(problem)
      }
      continue
    }
    const expected = clip(message.slice("Expected ".length, at), MAX_ISSUE_CHARS)
    const actual = clipActual(message.slice(at + ", actual ".length))
    const key = `${path}\u0000${actual}`
    const known = byKey.get(key)
    if (known !== undefined) {
      if (!known.expected.includes(expected)) known.expected.push(expected)
      continue
    }
    const problem = { path, expected: [expected], actual, other: undefined }
    byKey.set(key, problem)
    problems.push(problem)
  }
  return problems
}

const describeProblem = (p: Problem): string => {
  if (p.other !== undefined) return clip(`${p.path}: ${p.other}`, MAX_ISSUE_CHARS)
  const named = p.expected.flatMap((e) => e.split(" | "))
  const alternatives = named.length > 1 ? named.filter((e) => e !== "undefined") : named
  return clip(`${p.path}: Expected ${alternatives.join(" | ")}, actual ${p.actual}`, MAX_ISSUE_CHARS)
}

/** A decode error (or its issue) as one bounded message naming each field path once. */
export const describeIssues = (e: Schema.SchemaError | SchemaIssue.Issue): string => {
  const issues = issueLines(Schema.isSchemaError(e) ? e.issue : e)
  if (issues.length === 0) return boundMessage(String(e))
  const lines = problemsOf(issues).map(describeProblem)
  const listed = lines.slice(0, MAX_LISTED_ISSUES).join("; ")
  const rest = lines.length - MAX_LISTED_ISSUES
  return boundMessage(rest > 0 ? `${listed}; and ${rest} more` : listed)
}


/** A request the router found no route for, judged against the API being served (when known). */
const unrouted = (request: { readonly method: string; readonly url: string }, api: ApiRoutes | undefined) => {
  const path = request.url.split("?", 1)[0]!
  const quoted = clip(path, MAX_QUOTED_PATH_CHARS)
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
    if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
    const known = Option.flatMap(firstFailure(cause), (f) => classify(f, api))
    if (Option.isSome(known)) return Effect.succeed(toResponse(known.value))
    return Effect.as(Effect.logError("Unhandled failure", cause), toResponse(internal))
  })
