/**
 * Where the embedded workspace's HTTP surface goes. One listener per audience:
 *
 * - The gateway's port (this tenant's users) gets only the local GL adapter's connect page and
 *   its completion, for connect sessions of the tenant the process is bound to
 *   (`GlConnectRoutes`): `GET /workspace/gl/connect/<consumerId>` and
 *   `POST /workspace/gl/connect/<consumerId>/complete` with `{service}`. A session that is
 *   unknown, completed, or another tenant's answers 404, exactly alike.
 * - The admin listener (`adminWorkspaceApp`, served by main.ts on SVC_ADMIN_HOST:SVC_ADMIN_PORT)
 *   gets the whole multi-tenant WorkspaceApi, behind SVC_ADMIN_TOKEN when set.
 * - `npm run workspace` (`standaloneWorkspaceApp`) is a workspace service of its own: the
 *   WorkspaceApi behind the token, plus the connect page and completion for any tenant's open
 *   session (there the page is the GL adapter's public page, reached by a person's browser that
 *   holds no admin token; the session's random consumerId is the capability, as with a hosted
 *   GL adapter's link).
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { isUuid } from "../../api/ids.js"
import { refuseAllCrossSiteWrites } from "../../http/input/crossSite.js"
import { EmbeddedWorkspace } from "../embedded/layer.js"
import type { GlSession } from "../embedded/store.js"
import { glConnectPage } from "./glConnectPage.js"
import { GL_SERVICE_IDS } from "../../domain/glServices.js"
import { requireBearer } from "./AdminConfig.js"
import type { WorkspaceServerOptions, WorkspaceServices } from "./server.js"
import { WORKSPACE_PREFIX } from "../../upstream/WorkspaceApi.js"
import { errorResponse } from "../../http/errors/errorBody.js"
import { allowOf, matchPath, type Route, takes, withRoutes } from "../../http/errors/unrouted.js"

export const GL_CONNECT_PATH = `${WORKSPACE_PREFIX}/gl/connect`

const notFound = (consumerId: string) => errorResponse(404, "Not Found", `Connect session ${consumerId} not found`)

/** The page is a capability link: not cached, not framed, not leaked in a Referer. */
const PAGE_HEADERS = {
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
}

const CompleteBody = Schema.Struct({ service: Schema.String }).annotate({ identifier: "GlConnectCompleteBody" })
const decodeCompleteBody = (body: unknown) => Schema.decodeUnknownEffect(CompleteBody)(body, { onExcessProperty: "error" })

/**
 * The connect page and its completion over the embedded store, for sessions `allows` accepts.
 * Every failure answers in the spec's error shape; the session is checked before the body, so
 * another tenant's session answers 404 whatever the body says.
 */
export const makeGlConnect = (workspace: EmbeddedWorkspace, allows: (session: GlSession) => boolean) => {
  const sessionOf = (consumerId: string) =>
    isUuid(consumerId)
      ? Effect.map(workspace.openGlSession(consumerId), Option.filter(allows))
      : Effect.succeed(Option.none<GlSession>())

  /** Upstream trouble (the store unavailable) keeps its status and message. */
  const orUpstream = <E extends { readonly statusCode: number; readonly error: string; readonly message: string }>(
    effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, HttpServerRequest.HttpServerRequest>
  ) => Effect.catch(effect, (e) => Effect.succeed(errorResponse(e.statusCode, e.error, e.message)))

  const page = (consumerId: string) =>
    orUpstream(Effect.map(sessionOf(consumerId), (session) =>
      Option.match(session, {
        onNone: () => notFound(consumerId),
        onSome: (s) =>
          HttpServerResponse.html(
            glConnectPage(s.serviceId !== null && GL_SERVICE_IDS.includes(s.serviceId) ? s.serviceId : undefined)
          ).pipe(HttpServerResponse.setHeaders(PAGE_HEADERS))
      })))

  const complete = (consumerId: string) =>
    orUpstream(Effect.gen(function*() {
      const session = yield* sessionOf(consumerId)
      if (Option.isNone(session)) return notFound(consumerId)
      const request = yield* HttpServerRequest.HttpServerRequest
      const body = yield* Effect.result(Effect.flatMap(request.json, decodeCompleteBody))
      if (Result.isFailure(body)) {
        return errorResponse(400, "Bad Request", "Expected a JSON body {\"service\": \"<service id>\"}")
      }
      const service = body.success.service
      if (!GL_SERVICE_IDS.includes(service)) {
        return errorResponse(
          400,
          "Bad Request",
          `service: ${JSON.stringify(service.slice(0, 128))} is not a known service; known: ${GL_SERVICE_IDS.join(", ")}`
        )
      }
      yield* workspace.completeGlSession(consumerId, service)
      return HttpServerResponse.empty({ status: 204 })
    }))

  return { page, complete }
}

const paramOf = Effect.map(HttpRouter.params, (params) => params.consumerId ?? "")

/** GlConnectRoutes' methods and paths. */
export const GL_CONNECT_ROUTES: ReadonlyArray<Route> = [
  { method: "GET", path: `${GL_CONNECT_PATH}/:consumerId` },
  { method: "POST", path: `${GL_CONNECT_PATH}/:consumerId/complete` }
]

/**
 * The gateway port's part: the connect page and completion of this tenant's sessions only
 * (`tenantSlug`, the slug the process is bound to; None accepts no session).
 */
export const GlConnectRoutes = (tenantSlug: Option.Option<string>) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const workspace = yield* EmbeddedWorkspace
      const connect = makeGlConnect(workspace, (session) => Option.contains(tenantSlug, session.tenantSlug))
      yield* router.add("GET", `${GL_CONNECT_PATH}/:consumerId`, Effect.flatMap(paramOf, connect.page))
      yield* router.add("POST", `${GL_CONNECT_PATH}/:consumerId/complete`, Effect.flatMap(paramOf, connect.complete))
    })
  )

/**
 * The WorkspaceApi's server (./server.ts: every group, handler and its docs), imported when an
 * app is made: the gateway's admin listener makes its app on the first admin request.
 */
const makeWorkspaceHttpApp = (...args: Parameters<typeof import("./server.js").makeWorkspaceHttpApp>) =>
  Effect.flatMap(Effect.promise(() => import("./server.js")), (server) => server.makeWorkspaceHttpApp(...args))

/** The whole WorkspaceApi (every tenant), behind `options.adminToken` when set: the admin listener's app. */
export const adminWorkspaceApp = (
  options: WorkspaceServerOptions = {}
): Effect.Effect<
  Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest | Scope.Scope>,
  never,
  Scope.Scope | EmbeddedWorkspace | Exclude<WorkspaceServices, HttpRouter.HttpRouter>
> =>
  Effect.flatMap(EmbeddedWorkspace, (workspace) => makeWorkspaceHttpApp(workspace, workspace, options))

const ownPageOnly = refuseAllCrossSiteWrites("the connect page completes only from its own page")

/** GL_CONNECT_ROUTES as a table to match requests against (../../http/errors/unrouted.ts). */
const GL_CONNECT_TABLE = withRoutes({ groups: {} }, GL_CONNECT_ROUTES)

/**
 * `npm run workspace`: the WorkspaceApi behind the token, and in front of it the connect page
 * and completion of any tenant's open session, without the token.
 */
export const standaloneWorkspaceApp = (
  token: Option.Option<Redacted.Redacted<string>>,
  options: Omit<WorkspaceServerOptions, "adminToken"> = {}
) =>
  Effect.gen(function*() {
    const workspace = yield* EmbeddedWorkspace
    const api = yield* makeWorkspaceHttpApp(workspace, workspace, options)
    const guarded = requireBearer(token)(api)
    const connect = makeGlConnect(workspace, () => true)
    return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      // Matched as the router matches paths (case, repeated slashes, escapes), as on the gateway's port.
      const match = matchPath(GL_CONNECT_TABLE, request.url)[0]
      if (match === undefined) return guarded
      const consumerId = match.params[0]?.[1] ?? ""
      const completes = match.method === "POST"
      if (takes(request.method)(match)) {
        // Completed from the page itself (same-origin), never by a page on another site.
        return completes ? ownPageOnly(connect.complete(consumerId)) : connect.page(consumerId)
      }
      const allow = allowOf([match]).join(", ")
      return Effect.succeed(errorResponse(405, "Method Not Allowed", `A connect ${completes ? "completion takes POST" : "page takes GET and HEAD"}`, { allow }))
    })
  })
