/**
 * No writes from other sites. A browser sends some requests to any origin without asking it
 * first (no CORS preflight): a form post, `navigator.sendBeacon`, a `no-cors` fetch. Such a
 * request carries whatever ambient trust the browser has here (cookies at the edge, a position
 * on the network), so a page on any site could approve a step or reject a row for the person
 * who opened it. Two checks, both on the request's headers, before its body is read:
 *
 * 1. A write (POST, PUT, PATCH, DELETE) from another site is refused, 403, unless its Origin is
 *    listed in SVC_CORS_ORIGINS (OWASP CSRF cheat sheet: Fetch Metadata, then Origin):
 *    - `Sec-Fetch-Site` (every current browser sends it): `same-origin` and `none` (the user's
 *      own navigation) pass; `cross-site`, `same-site` (a sibling subdomain, or this host on
 *      another port: not this origin, so not trusted either) and any unknown value are refused.
 *    - No `Sec-Fetch-Site` (an older browser, or no browser): the request's source, its Origin
 *      or else its Referer, must be this host (`Host`, or `X-Forwarded-Host` behind a proxy);
 *      `Origin: null` (a sandboxed frame, a file: page) is refused. A request with neither
 *      header passes: curl, the CLI, the typed client and MCP SDK clients send none, and a
 *      browser always sends one of them on a cross-site write.
 * 2. A request with a body (Content-Length > 0, or Transfer-Encoding) must say
 *    `application/json` (src/http/input/jsonInput.ts decides which values are): 415 otherwise. A page
 *    can send no other type without a preflight, so no body from another site is ever read.
 *    (jsonInput.ts checks the type again for the bytes it actually reads.)
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import { UnsupportedMediaType } from "../../api/errors.js"
import { isJsonMediaType, unsupportedMediaType } from "./jsonInput.js"
import { quoted } from "../../lib/quoted.js"
import { errorResponse } from "../errors/errorBody.js"

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** The headers the decision reads (names lower-case, as Node gives them). */
export type RequestHeaders = Readonly<Record<string, string | undefined>>


/** The origin (scheme://host[:port]) of a URL, or undefined when it is not an http(s) URL. */
const originOf = (url: string): string | undefined => {
  try {
    const u = new URL(url)
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : undefined
  } catch {
    return undefined
  }
}

/** Whether `origin` names the host this request was sent to (default ports compared as such). */
const isOwnHost = (origin: string, headers: RequestHeaders): boolean => {
  let source: URL
  try {
    source = new URL(origin)
  } catch {
    return false
  }
  // X-Forwarded-Host: set by a proxy in front; a page cannot add it without a preflight.
  const hosts = [headers["host"], headers["x-forwarded-host"]?.split(",")[0]]
  return hosts.some((host) => {
    if (host === undefined || host.trim() === "") return false
    try {
      return new URL(`${source.protocol}//${host.trim()}`).host === source.host
    } catch {
      return false
    }
  })
}

/**
 * Why a write must be refused as cross-site, or undefined when it may go on. `allows` says
 * whether an Origin is listed in SVC_CORS_ORIGINS (cors.ts `originAllowed`).
 */
export const crossSiteRefusal = (
  method: string,
  headers: RequestHeaders,
  allows: (origin: string | undefined) => boolean,
  /** What the message tells the caller after the reason. */
  remedy = "a page on another site may write only when its origin is listed in SVC_CORS_ORIGINS"
): string | undefined => {
  if (!WRITE_METHODS.has(method.toUpperCase())) return undefined
  const origin = headers["origin"]
  const site = headers["sec-fetch-site"]?.trim().toLowerCase()
  const refused = (from: string, why: string) => `Cross-site write refused: ${method.toUpperCase()} from ${from} (${why}); ${remedy}`
  if (site !== undefined) {
    if (site === "same-origin" || site === "none") return undefined
    if (allows(origin)) return undefined
    return refused(
      origin === undefined ? "a page with no Origin" : `origin ${quoted(origin)}`,
      `Sec-Fetch-Site: ${site === "cross-site" || site === "same-site" ? site : quoted(site)}`
    )
  }
  // No fetch metadata: judge by where the request says it comes from, if it says.
  if (origin !== undefined) {
    if (origin !== "null" && (isOwnHost(origin, headers) || allows(origin))) return undefined
    return refused(`origin ${quoted(origin)}`, "not this host")
  }
  const referer = headers["referer"]
  if (referer !== undefined) {
    const from = originOf(referer)
    if (from !== undefined && (isOwnHost(from, headers) || allows(from))) return undefined
    return refused(`a page on ${quoted(from ?? referer)}`, "Referer not this host, no Origin")
  }
  return undefined
}

/** Whether a request carries a body, by its framing headers (before anything is read). */
export const hasBody = (headers: RequestHeaders): boolean => {
  if (headers["transfer-encoding"] !== undefined) return true
  const length = headers["content-length"]
  return length !== undefined && Number(length) > 0
}

const forbidden = (message: string) =>
  errorResponse(403, "Forbidden", message, { "cache-control": "no-store" })

/**
 * Routes whose body is raw bytes of any type (a file): instead of the JSON rule, such a write
 * must carry `header` with `value`, a header a simple request cannot send, so a page on another
 * site cannot post one without a CORS preflight (403 otherwise); its Content-Type must be a media
 * type (`isType`; 415 otherwise: what a Blob without a type sends).
 */
export interface RawBodies {
  readonly matches: (method: string, path: string) => boolean
  readonly header: string
  readonly value: string
  readonly isType: (contentType: string) => boolean
}

const rawBodyRefusal = (raw: RawBodies, headers: RequestHeaders): HttpServerResponse.HttpServerResponse | UnsupportedMediaType | undefined => {
  if (headers[raw.header]?.trim().toLowerCase() !== raw.value) {
    return forbidden(
      `${raw.header}: required, "${raw.value}" (a raw upload must carry this header, which a page on another site ` +
        "cannot send without a CORS preflight)"
    )
  }
  const type = headers["content-type"]
  if (type === undefined || !raw.isType(type)) {
    return unsupportedMediaType(type, "the file's media type (type/subtype)")
  }
  return undefined
}

/**
 * The middleware: refuses cross-site writes (403) and bodies that are not JSON (415) before
 * the request reaches the body reader or any route. `allows`: cors.ts `originAllowed(settings)`.
 */
export const refuseCrossSite = (
  allows: (origin: string | undefined) => boolean,
  raw?: RawBodies,
  /** Whether a route takes this method on this path: when none does, the router's 404 or 405 says so, not a 415. */
  routed?: (method: string, url: string) => boolean
) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  E | UnsupportedMediaType,
  R | HttpServerRequest.HttpServerRequest
> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    E | UnsupportedMediaType,
    R
  > => {
    const headers = request.headers
    const refusal = crossSiteRefusal(request.method, headers, allows)
    if (refusal !== undefined) return Effect.succeed(forbidden(refusal))
    const coding = unsupportedCoding(headers)
    if (coding !== undefined && (routed?.(request.method, request.url) ?? true)) return Effect.fail(coding)
    if (raw !== undefined && raw.matches(request.method, request.url)) {
      const refused = rawBodyRefusal(raw, headers)
      if (refused === undefined) return app
      return refused instanceof UnsupportedMediaType ? Effect.fail(refused) : Effect.succeed(refused)
    }
    if (hasBody(headers)) {
      const type = headers["content-type"]
      if ((type === undefined || !isJsonMediaType(type)) && (routed?.(request.method, request.url) ?? true)) {
        return Effect.fail(unsupportedMediaType(type))
      }
    }
    return app
  })

/** `Content-Encoding` values a body may carry: none, or no coding at all (RFC 9110 §8.4.1). */
const IDENTITY = /^\s*(?:identity)?\s*$/i

/**
 * A body in a content coding (gzip, br, ...): 415, as RFC 9110 §15.5.16 says for a coding the
 * server does not apply. Nothing decodes one here, so it would be read as the compressed bytes: a
 * gzip'd JSON body a 400 about its JSON, a gzip'd raw upload stored compressed, and a plain body
 * that claims a coding taken as it is.
 */
const unsupportedCoding = (headers: RequestHeaders): UnsupportedMediaType | undefined => {
  const coding = headers["content-encoding"]
  if (coding === undefined || IDENTITY.test(coding) || !hasBody(headers)) return undefined
  return new UnsupportedMediaType({ message: `Content-Encoding ${quoted(coding)} is not supported: send the body uncompressed` })
}

/**
 * Check 1 alone, with no origin allowed, for a listener no browser page has business writing
 * to (the admin listener's workspace API): its own body checks admit the raw document upload,
 * so the JSON-only rule (check 2) is not applied here.
 */
export const refuseAllCrossSiteWrites = (remedy: string) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const refusal = crossSiteRefusal(request.method, request.headers, () => false, remedy)
    return refusal === undefined ? app : Effect.succeed(forbidden(refusal))
  })
