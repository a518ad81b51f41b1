import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Api } from "@effect/platform/HttpApi"

/**
 * Routes built on their first request. `load` gives the layer that would register them; it is
 * built then, on a router of its own, and that router answers those paths from then on. Nothing
 * of it is imported or computed at start.
 */
export const lazyRoutes = (
  paths: ReadonlyArray<HttpRouter.PathInput>,
  load: () => Promise<Layer.Layer<never, never, Api>>
) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const api = yield* Api
      const app = yield* Effect.cached(
        Effect.promise(load).pipe(
          Effect.flatMap((layer) =>
            Effect.flatMap(HttpApiBuilder.Router.router, HttpRouter.toHttpApp).pipe(
              Effect.provide(Layer.provideMerge(layer, HttpApiBuilder.Router.Live))
            )
          ),
          Effect.provideService(Api, api)
        )
      )
      const handler = Effect.flatten(app)
      for (const path of paths) yield* router.get(path, handler)
    })
  )

