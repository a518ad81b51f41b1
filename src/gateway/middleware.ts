import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import type * as Types from "effect/Types"
import { cors, CORS_OFF, originAllowed } from "../http/input/cors.js"
import { observeRequests } from "../observability/requests.js"
import { Observability } from "../observability/Observability.js"
import { IdentityConfig, identityConfigFromEnv } from "../config/IdentityConfig.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { limitDeclaredBody } from "../http/input/bodyLimit.js"
import { refuseCrossSite } from "../http/input/crossSite.js"
import { shapeErrors } from "../http/errors/errorResponse.js"
import { identityMiddleware } from "./identity.js"
import { checkedJsonBodies, isJsonMediaType } from "../http/input/jsonInput.js"
import { requestScope } from "./requestScope.js"
import { GatewayApi } from "../api/Api.js"
import { BASE64_FILE_FIELDS, RAW_UPLOAD_HEADER, RAW_UPLOAD_ROUTE } from "../api/files.js"
import { isMediaType } from "../api/headerValues.js"
import { routerPath } from "../http/server/nodeServer.js"
import { refuseUnknownQueryParams } from "../http/input/queryParams.js"
import { refuseWithoutEventsKey } from "../handlers/eventsKey.js"
import { type ApiRoutes, matchPath, routableBy } from "../http/errors/unrouted.js"
import type { Base64Fields } from "../http/input/jsonInput.js"

/** The raw upload (its body is the file, streamed by its handler): the path as the router reads it. */
const isRawUpload = (method: string, url: string): boolean => {
  if (method !== "POST") return false
  let path = url.split("?", 1)[0]!
  // A web Request (in-process) carries its whole URL.
  if (!path.startsWith("/")) {
    try {
      path = new URL(url).pathname
    } catch {
      // Not a URL (`*v1/tasks/t/files/raw`): the router reads its first character as `/`, and so does routerPath.
    }
  }
  return RAW_UPLOAD_ROUTE.test(routerPath(path))
}

/** The files endpoints with base64 file content in their JSON body: path template to its fields. */
const base64Endpoints = new Map(
  Object.entries(BASE64_FILE_FIELDS).map(([name, fields]) =>
    [(GatewayApi as unknown as ApiRoutes).groups["files"]!.endpoints[name]!.path, fields] as const
  )
)

/** The base64 file fields of the body of `method url`: those of the one POST endpoint it routes to. */
const base64FieldsOf = (method: string, url: string): Base64Fields => {
  if (method !== "POST") return []
  const posts = matchPath(GatewayApi, url).filter((m) => m.method.toUpperCase() === "POST")
  return posts.length === 1 ? base64Endpoints.get(posts[0]!.path) ?? [] : []
}

/**
 * Api-wide middleware: writes from other sites answer 403 and bodies that are not JSON 415
 * (crossSite.ts), oversized bodies answer 413 (a declared Content-Length here; chunked
 * bodies are capped by the Node server, nodeServer.ts), every body passes the one JSON input
 * check (jsonInput.ts) before routing, every request then gets its deadline and every write
 * its idempotency key (requestScope.ts), and every failure leaves in the spec's error shape.
 * Before the body is touched: who acts (identity.ts; off unless SVC_ACTOR_HEADER or SVC_JWT_JWKS),
 * then the events key of POST /v1/tasks/:taskId/events (../handlers/eventsKey.ts).
 * Around all of it: request ids, logs and metrics, and CORS (src/observability/).
 *
 * A global router middleware: it wraps the router itself, so unrouted requests (404, 405) pass
 * through it like the rest. `routes`: every route the server has (the API's and those beside it,
 * ../http/errors/unrouted.ts withRoutes), what 404 and 405 are judged by.
 */
export const gatewayMiddleware = (routes: ApiRoutes) => HttpRouter.middleware(
  Effect.gen(function*() {
    const config = yield* TenantConfig
    const limit = limitDeclaredBody(config.maxBodyBytes)
    // A method no route takes on the path, or a path no route has: the router's 405 or 404
    // answers, whatever the body (a file sent with the wrong method is not a 415, a malformed
    // body to a mistyped path not a 400).
    const routed = routableBy(routes)
    // Only a body that is not JSON can be one the cross-site rule let through for a 405 (it
    // refuses the others first): JSON writes, the hot path, never match paths here.
    const checked = checkedJsonBodies(
      config.maxJsonDepth,
      undefined,
      (request) =>
        isRawUpload(request.method, request.url) ||
        !isJsonMediaType(request.headers["content-type"] ?? "") && !routed(request.method, request.url),
      (request) => base64FieldsOf(request.method, request.url),
      // A refused JSON body where no route takes the method (or has the path): the router's 405 or 404, as without a body.
      (request) => routed(request.method, request.url),
      config.maxJsonItems
    )
    const scoped = requestScope(config.requestDeadlineMs)
    // Settings read at start (a test may provide them); a bad one stops the start naming it.
    const identitySettings = Option.getOrUndefined(yield* Effect.serviceOption(IdentityConfig)) ?? (yield* identityConfigFromEnv)
    const identify = yield* identityMiddleware(identitySettings, config.tenantSlug)
    // Outermost: the request's id, log line and metrics (src/observability/requests.ts), then
    // CORS (off unless SVC_CORS_ORIGINS), both seeing every answer, errors included.
    const observability = Option.getOrUndefined(yield* Effect.serviceOption(Observability))
    const observe = observeRequests(
      observability === undefined ? {} : { line: observability.line, log: observability.settings.log }
    )
    const corsSettings = observability?.settings.cors ?? CORS_OFF
    const withCors = cors(corsSettings)
    // Before any body is read: no writes from other sites, no body but JSON (crossSite.ts).
    const sameSite = refuseCrossSite(originAllowed(corsSettings), {
      matches: isRawUpload,
      header: RAW_UPLOAD_HEADER,
      value: "raw",
      isType: isMediaType
    }, routed)
    // Query parameters the endpoint does not declare: a 400 like unknown body keys (../http/input/queryParams.ts).
    const knownQuery = refuseUnknownQueryParams(GatewayApi)
    // The events key of POST /v1/tasks/:taskId/events, from the headers: a request refused for it
    // has no body read or parsed (../handlers/eventsKey.ts).
    const eventsKey = refuseWithoutEventsKey(GatewayApi as unknown as ApiRoutes, config.eventsKey)
    // Every failure is answered here (shapeErrors), so nothing is left unhandled; the router's
    // types ask a global middleware to leave errors alone, hence the widened error type.
    return (app: Effect.Effect<HttpServerResponse.HttpServerResponse, Types.unhandled>): Effect.Effect<
      HttpServerResponse.HttpServerResponse,
      Types.unhandled,
      HttpServerRequest.HttpServerRequest
    > => observe(withCors(shapeErrors(sameSite(identify(eventsKey(limit(knownQuery(checked(scoped(app))))))), routes)))
  }),
  { global: true }
)
