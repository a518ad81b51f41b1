/**
 * CORS for browser clients on other origins, off unless SVC_CORS_ORIGINS lists them.
 *
 * - SVC_CORS_ORIGINS: comma-separated origins (`https://app.example.com`,
 *   `http://localhost:5173`), or `*` for any origin. Unset or empty: no CORS headers at all, and
 *   `OPTIONS` answers 405 like any method a path does not take.
 * - SVC_CORS_CREDENTIALS: `true` lets the browser send cookies / HTTP authentication
 *   (Access-Control-Allow-Credentials). Refused together with `*`.
 *
 * A preflight (OPTIONS with Origin and Access-Control-Request-Method) from an allowed origin
 * answers 204 with the methods and request headers the API takes; from any other origin it is
 * answered as without CORS (405), which the browser reports as a CORS failure. Other requests
 * from an allowed origin get Access-Control-Allow-Origin (the origin itself, with `Vary:
 * Origin`) and the response headers a script may read (x-request-id, content-disposition,
 * retry-after).
 *
 * Why not HttpMiddleware.cors of effect/http: it answers every OPTIONS with 204 (no Origin,
 * a disallowed origin, an unknown path alike), sends a single configured origin to every
 * caller, and its two `Vary` values overwrite each other.
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { invalidSetting, invalidSettingAt, quoteSetting } from "../../config/settingErrors.js"

/** An HTTP application: the response effect for the request in context. */
type App<E, R> = Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>

export interface CorsSettings {
  /** Allowed origins (serialized, e.g. `https://app.example.com`); `*` alone allows any. Empty: CORS off. */
  readonly origins: ReadonlyArray<string>
  readonly credentials: boolean
}

export const CORS_OFF: CorsSettings = { origins: [], credentials: false }

export const CORS_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const
export const CORS_REQUEST_HEADERS = [
  "content-type",
  "authorization",
  "idempotency-key",
  "x-request-id",
  "x-svc-events-key",
  // The raw upload's header (src/api/files.ts RAW_UPLOAD_HEADER): a listed origin may send one.
  "x-svc-upload",
  "traceparent",
  "tracestate"
] as const
export const CORS_EXPOSED_HEADERS = ["x-request-id", "content-disposition", "retry-after", "x-next-cursor"] as const
export const CORS_MAX_AGE_S = 600

/** One configured origin, serialized as browsers send it; an error message when it is not one. */
export const parseOrigin = (text: string): Result.Result<string, string> => {
  const t = text.trim()
  if (t === "*") return Result.succeed("*")
  let url: URL
  try {
    url = new URL(t)
  } catch {
    return Result.fail(`"${t}" is not an origin: expected scheme://host[:port], e.g. https://app.example.com`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Result.fail(`"${t}" is not an http(s) origin`)
  }
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "" || url.username !== "") {
    return Result.fail(`"${t}" is not an origin: no path, query or credentials (expected e.g. ${url.origin})`)
  }
  return Result.succeed(url.origin)
}

/** SVC_CORS_ORIGINS and SVC_CORS_CREDENTIALS, failing with the setting named (src/config/settingErrors.ts). */
export const corsConfig: Config.Config<CorsSettings> = Config.all({
  origins: Config.String("SVC_CORS_ORIGINS").pipe(
    Config.mapEffect((text) => {
      const refuse = (why: string) =>
        Effect.fail(invalidSetting(`SVC_CORS_ORIGINS=${quoteSetting("SVC_CORS_ORIGINS", text)}: ${why}`))
      const origins: Array<string> = []
      for (const part of text.split(",")) {
        if (part.trim() === "") continue
        const parsed = parseOrigin(part)
        if (Result.isFailure(parsed)) return refuse(parsed.failure)
        if (!origins.includes(parsed.success)) origins.push(parsed.success)
      }
      if (origins.includes("*") && origins.length > 1) {
        return refuse("`*` allows every origin: give it alone, or list origins")
      }
      return Effect.succeed<ReadonlyArray<string>>(origins)
    }),
    Config.withDefault<ReadonlyArray<string>>([])
  ),
  credentials: Config.Boolean("SVC_CORS_CREDENTIALS").pipe(Config.withDefault(false))
}).pipe(
  Config.mapEffect((s) =>
    s.credentials && s.origins.includes("*")
      ? Effect.fail(invalidSettingAt(
        "SVC_CORS_CREDENTIALS",
        "expected false while SVC_CORS_ORIGINS is `*` (any site could act with the user's credentials): list the origins"
      ))
      : Effect.succeed(s)
  )
)

const preflightHeaders = (origin: string, settings: CorsSettings): Record<string, string> => ({
  "access-control-allow-origin": origin,
  vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
  "access-control-allow-methods": CORS_METHODS.join(", "),
  "access-control-allow-headers": CORS_REQUEST_HEADERS.join(", "),
  "access-control-max-age": String(CORS_MAX_AGE_S),
  ...(settings.credentials ? { "access-control-allow-credentials": "true" } : {})
})

/**
 * Whether a request's Origin is one SVC_CORS_ORIGINS allows (any but `null` with `*`). Also
 * what lets a page on another site write (src/http/input/crossSite.ts).
 */
export const originAllowed = (settings: CorsSettings): (origin: string | undefined) => boolean => {
  const any = settings.origins.includes("*")
  const allowed = new Set(settings.origins)
  // `null` is an opaque origin (a sandboxed frame, a file: or data: page): never one listed.
  return (origin) => origin !== undefined && origin !== "null" && (any || allowed.has(origin))
}

/**
 * The CORS middleware for `settings`; the identity when CORS is off (no cost per request).
 */
export const cors = (settings: CorsSettings) => {
  if (settings.origins.length === 0) return <E, R>(app: App<E, R>): App<E, R> => app
  const any = settings.origins.includes("*")
  const allows = originAllowed(settings)
  /** The Access-Control-Allow-Origin value for a request's Origin, or undefined when not allowed. */
  const allowOrigin = (origin: string | undefined): string | undefined => {
    if (!allows(origin)) return undefined
    return any && !settings.credentials ? "*" : origin
  }
  const simple = (origin: string): Record<string, string> => ({
    "access-control-allow-origin": origin,
    "access-control-expose-headers": CORS_EXPOSED_HEADERS.join(", "),
    ...(settings.credentials ? { "access-control-allow-credentials": "true" } : {})
  })
  return <E, R>(app: App<E, R>): App<E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      const origin = request.headers["origin"]
      const allow = allowOrigin(origin)
      if (
        request.method === "OPTIONS" && allow !== undefined &&
        request.headers["access-control-request-method"] !== undefined
      ) {
        return Effect.succeed(HttpServerResponse.empty({ status: 204, headers: preflightHeaders(allow, settings) }))
      }
      if (origin === undefined) return app
      return Effect.map(app, (response) => {
        const withVary = any && !settings.credentials ? response : appendVary(response)
        return allow === undefined ? withVary : HttpServerResponse.setHeaders(withVary, simple(allow))
      })
    })
}

const appendVary = (response: HttpServerResponse.HttpServerResponse) => {
  const vary = response.headers["vary"]
  return HttpServerResponse.setHeader(response, "vary", vary === undefined || vary === "" ? "Origin" : `${vary}, Origin`)
}
