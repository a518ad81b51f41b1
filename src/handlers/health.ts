import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { GatewayApi } from "../api/Api.js"

// A constant answer, built once: the handler skips the success schema's encode on every request
// (the contract's schema still documents it; test/gateway checks the body against it).
const ok = Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" }))

const HealthGroup = HttpApiBuilder.group(GatewayApi, "health", (handlers) => handlers.handle("health", () => ok))

type HealthService = Layer.Success<typeof HealthGroup>

/**
 * A layer's own build step. Every Layer has it at run time (effect 4.1.0, pinned); its type is
 * marked internal. Layer.build would do, but it provides its memo map to the build, and the
 * group would capture that.
 */
interface Buildable<A> {
  readonly build: (memoMap: Layer.MemoMap, scope: Scope.Scope) => Effect.Effect<Context.Context<A>>
}

/**
 * Built in an empty context: HttpApiBuilder merges the context a group was built in into every
 * request of that group (two copies of the request's whole context, then each of the group's
 * services set on the copy: 8 KB of garbage per request, a quarter of a health check's). The
 * health handler needs no service, so its group captures none, and the merge of an empty context
 * costs nothing (with the build's contextMergePlugin, scripts/build.mjs; bench/PROFILE.md, "S1 as
 * shipped, attributed"; test/ops/healthAllocation.test.ts).
 */
export const HealthLive: Layer.Layer<HealthService> = Layer.effectContext(
  Effect.flatMap(Effect.scope, (scope) =>
    (HealthGroup as unknown as Buildable<HealthService>).build(Layer.makeMemoMapUnsafe(), scope).pipe(
      Effect.updateContext((_: Context.Context<never>) => Context.empty())
    ))
)
