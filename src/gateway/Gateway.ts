/**
 * The gateway's HTTP application as one Layer: the contract, its handlers, the api-wide
 * middleware, /openapi.json, /docs, the readiness probe /readyz and /metrics. It needs the ports
 * (WorkspaceClient, FileFetcher), TenantConfig and an HttpServer with the platform's services
 * (NodeHttpServer.layer gives both); main.ts and the tests provide them (main.ts also the
 * process's drain, which readiness reads).
 */
import * as Effect from "effect/Effect"
import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { GatewayApi } from "../api/Api.js"
import { namesLink } from "../api/linkPath.js"
import { metricsHandler } from "../observability/prometheus.js"
import { Observability } from "../observability/Observability.js"
import { RouteCaptureLive } from "../observability/requests.js"
import { DataLive } from "../handlers/data.js"
import { EntitiesLive } from "../handlers/entities.js"
import { EventsLive } from "../handlers/events.js"
import { FilesLive } from "../handlers/files.js"
import { GlLive } from "../handlers/gl.js"
import { HealthLive } from "../handlers/health.js"
import { SubledgersLive } from "../handlers/subledgers.js"
import { TasksLive } from "../handlers/tasks.js"
import { InboxLive } from "../handlers/inbox.js"
import { EventStreams } from "../services/EventStreams.js"
import { Tenant } from "../services/Tenant.js"
import { TenantConfig } from "../config/TenantConfig.js"
import { lazyRoutes } from "../http/server/lazyRoutes.js"
import { withPageSecurity } from "../http/output/pageSecurity.js"
import { gatewayMiddleware } from "./middleware.js"
import { type Route, withRoutes } from "../http/errors/unrouted.js"
import { MCP_PATH } from "../mcp/McpConfig.js"
import { Readiness } from "./Readiness.js"
import { routerConfig } from "../http/server/ServerLimits.js"
import { McpLive } from "../mcp/route.js"
import { errorResponse } from "../http/errors/errorBody.js"
import { RETRY_AFTER_SECONDS } from "../http/errors/errorResponse.js"

const ApiLive = HttpApiBuilder.layer(GatewayApi).pipe(
  Layer.provide([HealthLive, EntitiesLive, TasksLive, InboxLive, EventsLive, FilesLive, DataLive, SubledgersLive, GlLive]),
  Layer.provide(EventStreams.layer),
  Layer.provide(Tenant.layer)
)

/**
 * /openapi.json and /docs, built on first use: the docs page inlines a 3 MB script (about
 * 13 MB of heap once loaded), and the document takes a walk over every schema. Neither is
 * needed to serve the API, so neither costs start time or memory until someone asks.
 */
const Docs = Layer.mergeAll(
  lazyRoutes(["/openapi.json"], async () => {
    const document = HttpServerResponse.jsonUnsafe(OpenApi.fromApi(GatewayApi))
    return HttpRouter.add("GET", "/openapi.json", Effect.succeed(document))
  }),
  lazyRoutes(
    ["/docs"],
    async () =>
      // Inline script and no remote fonts: the page works with no network.
      (await import("effect/http-api/HttpApiScalar")).layer(GatewayApi, { path: "/docs", scalar: { withDefaultFonts: false } }),
    // The console's security headers, its inline scripts allowed by hash.
    withPageSecurity
  )
)

/** The task console at / and /console/<file> (./console.ts), loaded on its first request like /docs. */
const Console = lazyRoutes(["/", "/console/:file"], async () => (await import("./console.js")).ConsoleRoutes)

/**
 * GET /readyz (readiness.ts): 200 `{"status":"ready"}`, or 503 in the error shape saying why.
 * A plain route beside the api, like /docs: an operational probe, not part of the tenant API
 * (so not in /openapi.json). Never cached by anything in between.
 */
const ReadinessRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const readiness = yield* Readiness
    const headers = { "cache-control": "no-store" }
    yield* router.add(
      "GET",
      "/readyz",
      Effect.map(readiness.check, (verdict) =>
        verdict.ready
          ? HttpServerResponse.jsonUnsafe({ status: "ready" }, { headers })
          : errorResponse(503, "Service Unavailable", `Not ready: ${verdict.reason}`, { ...headers, "retry-after": RETRY_AFTER_SECONDS }))
    )
  })
)

/**
 * GET /metrics: every metric in the Prometheus text format (src/observability/prometheus.ts).
 * Like /readyz, a plain route beside the api, not in /openapi.json. With SVC_METRICS_TOKEN set,
 * a scrape needs `Authorization: Bearer <token>`.
 */
const MetricsRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const observability = yield* Effect.serviceOption(Observability)
    yield* router.add("GET", "/metrics", metricsHandler(Option.flatMap(observability, (o) => o.settings.metricsToken)))
  })
)

/** The routes above beside the API's, as the router has them: what 404 and 405 are judged by. */
const BESIDE_API: ReadonlyArray<Route> = [
  { method: "GET", path: "/openapi.json" },
  { method: "GET", path: "/docs" },
  { method: "GET", path: "/" },
  { method: "GET", path: "/console/:file" },
  // The agent tool server's route takes every method and answers all but POST 405 itself.
  { method: "POST", path: MCP_PATH },
  { method: "GET", path: "/readyz" },
  { method: "GET", path: "/metrics" }
]

/**
 * Every route, each telling the request's log line and metrics which route it is (RouteCaptureLive);
 * `extra`: routes of the process beside the API (main.ts: the embedded workspace's GL connect page).
 */
const routes = <E, R>(extra: Layer.Layer<never, E, R>) =>
  Layer.mergeAll(
    ApiLive,
    Docs,
    Console,
    McpLive, // the agent tool server at /mcp (src/mcp/server.ts)
    ReadinessRoute,
    MetricsRoute,
    extra
  ).pipe(Layer.provide(RouteCaptureLive))

/**
 * Tracing spans only when SVC_TRACING is on. Off, the tracer is disabled for every fiber the
 * server runs, not only the request span: store statements and workspace calls then make no-op
 * spans instead of recording ones, and the server takes its untraced path (bench/PROFILE.md,
 * S1 and S4).
 */
const tracing = <A, E, R>(layer: Layer.Layer<A, E, R>) =>
  Layer.unwrap(
    Effect.map(TenantConfig, (config) =>
      config.tracing
        // A decision link's URL is its credential: its requests make no span (spans carry the URL).
        ? layer.pipe(Layer.provide(Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => namesLink(request.url))))
        : layer.pipe(Layer.provide(Layer.succeed(References.TracerEnabled, false))))
  )

/** Effect's own entries of a context (its references, the platform's services, the scope). */
const isEffects = (key: string) => key.startsWith("effect/") || key.startsWith("@effect/") || key.startsWith("~effect/")
const effectEntriesOnly = <R>(context: Context.Context<R>): Context.Context<R> =>
  Context.makeUnsafe(new Map([...context.mapUnsafe].filter(([key]) => isEffects(key))))

/**
 * Every request fiber starts from the context the server was started in, and HttpApiBuilder copies
 * that whole context once per request (its merge of a group's services flattens it: a Map copy of
 * every entry: 4.2 KB of a health check's 18.6). Our services are read where routes, groups and
 * middleware are built, never from a request fiber's own context, so the server is started with
 * Effect's entries only: 12 of its 22, and 3 KB copied per request.
 */
const requestContextLean = Layer.effect(
  HttpServer.HttpServer,
  Effect.map(HttpServer.HttpServer, (server) =>
    HttpServer.make({
      address: server.address,
      serve: ((app: any, middleware: any) =>
        Effect.updateContext(server.serve(app, middleware), effectEntriesOnly)) as unknown as HttpServer.HttpServer["Service"]["serve"]
    }))
)

/**
 * Served without Effect's request logger (our own line is written by the middleware) and
 * without its "Listening on" line (main.ts says where it listens). Path parameters up to
 * MAX_PATH_PARAM_LENGTH (nested composite task ids), not find-my-way's 100. `extraRoutes`: the
 * methods and paths `extra` adds.
 */
export const gatewayLive = <E = never, R = never>(
  extra: Layer.Layer<never, E, R> = Layer.empty as Layer.Layer<never, E, R>,
  extraRoutes: ReadonlyArray<Route> = []
) =>
  HttpRouter.serve(Layer.merge(routes(extra), gatewayMiddleware(withRoutes(GatewayApi, [...BESIDE_API, ...extraRoutes]))), {
    routerConfig,
    disableLogger: true,
    disableListenLog: true
  }).pipe(
    Layer.provide(requestContextLean),
    tracing,
    // Outside the server's own layers, so main.ts's start-up check shares this instance.
    Layer.provide(Readiness.layer),
    // One tenant lookup (and its cache) for every route and middleware that names the tenant.
    Layer.provide(Tenant.layer)
  )

/** The gateway with no routes beyond its own. */
export const GatewayLive = gatewayLive()
