import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import type * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/**
 * Routes built on their first request. `load` gives the layer that would register them; it is
 * built then, on a router of its own (in the scope of this layer), and that router answers those
 * paths from then on. Nothing of it is imported or computed at start.
 */
export const lazyRoutes = (
  paths: ReadonlyArray<HttpRouter.PathInput>,
  load: () => Promise<Layer.Layer<never, never, HttpRouter.HttpRouter>>
) =>
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const app = yield* Effect.cached(
        Effect.promise(load).pipe(
          Effect.flatMap((layer) => HttpRouter.toHttpEffect(layer)),
          Scope.provide(scope)
        )
      )
      const handler = Effect.flatten(app)
      for (const path of paths) yield* router.add("GET", path, handler)
    })
  )
