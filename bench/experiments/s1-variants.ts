/**
 * Servers for the S1 decomposition (experiments/s1-layers.ts): the same `{"status":"ok"}` answer
 * through more and more of the Effect stack, each on NodeHttpServer like the gateway.
 *
 * VARIANT: effect-app (HttpServer.serve of a constant response: the platform's handler, one
 * fiber per request), effect-router (HttpRouter.serve of one route, as the gateway serves: no
 * request logger, no listen log), httpapi (plus HttpApi: schema-encoded
 * success, group handler; tracing off), httpapi-traced (the same with Effect's default
 * per-request span), httpapi-response (httpapi whose handler returns a prebuilt
 * HttpServerResponse: no schema encoding of the success), gateway-no-middleware (GatewayLive's
 * composition without GatewayMiddleware, the fixture store of ../servers/fixtureStore.ts).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { createServer } from "node:http"
import { GatewayApi } from "../../src/api/Api.js"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { DataLive } from "../../src/handlers/data.js"
import { EntitiesLive } from "../../src/handlers/entities.js"
import { EventsLive } from "../../src/handlers/events.js"
import { FilesLive } from "../../src/handlers/files.js"
import { GlLive } from "../../src/handlers/gl.js"
import { InboxLive } from "../../src/handlers/inbox.js"
import { HealthLive } from "../../src/handlers/health.js"
import { SubledgersLive } from "../../src/handlers/subledgers.js"
import { TasksLive } from "../../src/handlers/tasks.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { routerConfig } from "../../src/http/server/ServerLimits.js"
import { EventStreams } from "../../src/services/EventStreams.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { Tenant } from "../../src/services/Tenant.js"
import { TenantConfig } from "../../src/config/TenantConfig.js"
import { fixtureStore } from "../servers/fixtureStore.js"

const port = Number(process.env.PORT)
const server = NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })
const ok = HttpServerResponse.jsonUnsafe({ status: "ok" })
/** The tracer off for every fiber the server runs, as the gateway does with SVC_TRACING off. */
const noTracing = <A, E, R>(layer: Layer.Layer<A, E, R>) => layer.pipe(Layer.provide(Layer.succeed(References.TracerEnabled, false)))
/** Served as the gateway serves (src/gateway/Gateway.ts): no request logger, no listen log. */
const serve = <A, E, R>(routes: Layer.Layer<A, E, R>) =>
  HttpRouter.serve(routes, { routerConfig, disableLogger: true, disableListenLog: true })

class Api extends HttpApi.make("api").add(
  HttpApiGroup.make("health").add(
    HttpApiEndpoint.get("health", "/health", { success: Schema.Struct({ status: Schema.Literal("ok") }) })
  )
).prefix("/v1") {}
const ApiLive = HttpApiBuilder.layer(Api).pipe(
  Layer.provide(HttpApiBuilder.group(Api, "health", (h) => h.handle("health", () => Effect.succeed({ status: "ok" as const }))))
)

const ApiLiveResponse = HttpApiBuilder.layer(Api).pipe(
  Layer.provide(HttpApiBuilder.group(Api, "health", (h) => h.handle("health", () => Effect.succeed(ok))))
)

/** Gateway.ts's composition, minus GatewayMiddleware (and minus /docs, which costs nothing per request). */
const gatewayNoMiddleware = () => {
  const api = HttpApiBuilder.layer(GatewayApi).pipe(
    Layer.provide([HealthLive, EntitiesLive, TasksLive, InboxLive, EventsLive, FilesLive, DataLive, SubledgersLive, GlLive]),
    Layer.provide(EventStreams.layer)
  )
  // Tenant outside the server: its handlers' requests need it as well as their layers.
  return noTracing(serve(api)).pipe(
    Layer.provide(Tenant.layer),
    Layer.provide(fixtureStore(process.env.BENCH_FIXTURE!)),
    Layer.provide(FileFetcher.layer([inlineBase64])),
    Layer.provide(TenantConfig.make({
      tenantSlug: Option.some("acme"),
      eventsKey: Option.none(),
      host: "127.0.0.1",
      port,
      maxBodyBytes: 32 * 1024 * 1024,
      maxJsonDepth: 64,
      maxJsonItems: 1_000_000,
      nextStepConcurrency: 16,
      runbookConcurrency: 8,
      tracing: false,
      workspaceUrl: Option.none(),
      workspaceTimeoutMs: 10_000,
      workspaceRetries: 0,
      workspaceMaxConnections: 192,
      requestDeadlineMs: 15_000
    })),
    Layer.provide(NodeHttpServer.layer(() => createGatewayServer(32 * 1024 * 1024), { port, host: "127.0.0.1" }))
  )
}

const variants: Record<string, () => Layer.Layer<never, unknown, never>> = {
  "effect-app": () => noTracing(HttpServer.serve(Effect.succeed(ok))).pipe(Layer.provide(server)),
  "effect-router": () => noTracing(serve(HttpRouter.add("GET", "/v1/health", Effect.succeed(ok)))).pipe(Layer.provide(server)),
  "httpapi": () => noTracing(serve(ApiLive)).pipe(Layer.provide(server)),
  "httpapi-traced": () => serve(ApiLive).pipe(Layer.provide(server)),
  "httpapi-response": () => noTracing(serve(ApiLiveResponse)).pipe(Layer.provide(server)),
  "gateway-no-middleware": gatewayNoMiddleware
}

const variant = variants[process.env.VARIANT ?? ""]
if (variant === undefined) throw new Error(`VARIANT must be one of ${Object.keys(variants).join(", ")}`)
NodeRuntime.runMain(Layer.launch(variant()))
