import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { GatewayApi } from "../api/Api.js"

// A constant answer, built once: the handler skips the success schema's encode on every request
// (the contract's schema still documents it; test/gateway checks the body against it).
const ok = Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" }))

const HealthGroup = HttpApiBuilder.group(GatewayApi, "health", (handlers) => handlers.handle("health", () => ok))

/**
 * Built in an empty context: HttpApiBuilder merges the context a group was built in into every
 * request of that group (a copy of the request's whole context, then each of the group's
 * services set on it: 9 KB of garbage per request, a third of a health check's). The health
 * handler needs no service, so its group carries none and the merge is skipped
 * (bench/PROFILE.md, "S1: where the allocations go").
 */
export const HealthLive = Layer.effectContext(
  Effect.flatMap(Effect.scope, (scope) =>
    // `build` itself: Layer.build would add its memo map to the context the group captures.
    HealthGroup.build(Layer.makeMemoMapUnsafe(), scope).pipe(Effect.updateContext(() => Context.empty())))
)
