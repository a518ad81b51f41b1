import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/**
 * `context` without the request it was captured in: for routes built inside a request, whose
 * Effect 4 HttpApi handlers would otherwise run with that request (body already read) forever.
 */
export const withoutRequest = <R>(context: Context.Context<R>) =>
  Context.omit(HttpServerRequest.HttpServerRequest, HttpServerRequest.ParsedSearchParams, HttpRouter.RouteContext)(context)

/**
 * Routes built on their first request. `load` gives the layer that would register them; it is
 * built then, on a router of its own (in the scope of this layer), and that router answers those
 * paths from then on. Nothing of it is imported or computed at start.
 */
export const lazyRoutes = (
  paths: ReadonlyArray<HttpRouter.PathInput>,
  load: () => Promise<Layer.Layer<never, never, HttpRouter.HttpRouter>>,
  /** Applied to every answer of those routes (e.g. a page's security headers, pageSecurity.ts). */
  finish?: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse
) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const app = yield* Effect.cached(
        Effect.promise(load).pipe(
          Effect.flatMap((layer) => HttpRouter.toHttpEffect(layer)),
          Scope.provide(scope),
          // Built inside the first request: keep that request out of what the routes capture
          // (Effect 4's HttpApi handlers run in their build context; see workspace/server/server.ts).
          // And out of the memo map of the app it is served in: a fork of it would hand back that
          // app's own router (already built there), and the routes would be declared twice (the
          // admin listener's /workspace/docs answered 500: "Method 'GET' already declared").
          Effect.updateContext((context: Context.Context<never>) => Context.omit(Layer.CurrentMemoMap)(withoutRequest(context)))
        )
      )
      const handler = finish === undefined ? Effect.flatten(app) : Effect.map(Effect.flatten(app), finish)
      for (const path of paths) yield* router.add("GET", path, handler)
    })
  )
