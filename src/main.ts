/**
 * Composition root: settings → Layers → serve. With SVC_WORKSPACE_URL the WorkspaceClient is
 * the HTTP client of WorkspaceApi (sending SVC_WORKSPACE_TOKEN as its bearer token when set);
 * without it the embedded workspace runs in this process on a local SQLite file (demo data on
 * first start).
 *
 * One listener per audience. The gateway's port (HOST:PORT) serves this tenant's users: /v1,
 * /docs, /openapi.json and the GL connect page of this tenant's sessions. In embedded mode the
 * multi-tenant WorkspaceApi (registry, webhook, every tenant's records) is served only on the
 * admin listener (SVC_ADMIN_HOST:SVC_ADMIN_PORT, loopback by default, behind SVC_ADMIN_TOKEN
 * when set; src/workspace/server/AdminConfig.ts).
 *
 * Settings come from the environment, and from `.env` in the working directory for what the
 * environment does not set (src/config/dotEnv.ts).
 *
 * Stop: SIGTERM or SIGINT drains both listeners (src/http/server/Drain.ts), bounded by
 * SVC_SHUTDOWN_GRACE_MS; exit 0 after a clean drain, 1 when it had to cut. Readiness
 * (GET /readyz, src/gateway/Readiness.ts) turns 503 as the drain starts.
 */
// First: `.env` fills the environment before anything reads a setting.
import { describeDotEnv } from "./config/dotEnv.js"
// Then every JSON.parse of the process reads escaped keys as written (V8's key bug).
import "./http/jsonParseFix.js"
// And Node's tick objects keep their maps (a freed map made every process.nextTick slow).
import "./lib/tickObjectMaps.js"
import { RAW_UPLOAD_ROUTE } from "./api/files.js"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpPlatform from "@effect/platform-node/NodeHttpPlatform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodePath from "@effect/platform-node/NodePath"
import * as Etag from "effect/http/Etag"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import type * as Redacted from "effect/Redacted"
import { IngestConfig } from "./files/IngestConfig.js"
import { FileFetcherLive } from "./files/providers/index.js"
import { Drain, drainTeardown, launchDrained } from "./http/server/Drain.js"
import { ProcessDrain } from "./lib/ProcessDrain.js"
import { GatewayLive, gatewayLive } from "./gateway/Gateway.js"
import { invalidSetting } from "./config/settingErrors.js"
import { describeListenError, failStart, startFailureTeardown } from "./http/server/failStart.js"
import { describeIdentity, IdentityConfig, identityConfigFromEnv } from "./config/IdentityConfig.js"
import { makeKeySet } from "./gateway/jwtKeys.js"
import { createGatewayServer } from "./http/server/nodeServer.js"
import { Readiness } from "./gateway/Readiness.js"
import { LISTEN_BACKLOG, type ServerLimits, serverLimitsConfig, shutdownGraceConfig } from "./http/server/ServerLimits.js"
import { intSetting } from "./config/read.js"
import { TenantConfig, tenantConfigFromEnv, type TenantConfigShape } from "./config/TenantConfig.js"
import { eventStreamSettingsFromEnv } from "./services/EventStreams.js"
import { unknownSettingWarnings } from "./config/unknownSettings.js"
import { ignoredWithWorkspaceService } from "./config/embeddedOnly.js"
import { type AdminListen, adminSettings, type AdminSettings, workspaceToken } from "./workspace/server/AdminConfig.js"
import { adminWorkspaceApp, GL_CONNECT_ROUTES, GlConnectRoutes } from "./workspace/server/mount.js"
import { DECISION_LINK_ROUTES, DecisionLinkRoutes } from "./workspace/server/linkRoutes.js"
import { WORKSPACE_OPENAPI_PATH, WORKSPACE_PREFIX } from "./upstream/WorkspaceApi.js"
import { databaseLabel, DEMO_TENANT_SLUG, EmbeddedWorkspace, embeddedSettings, EmbeddedWorkspaceLive } from "./workspace/embedded/layer.js"
import { HttpWorkspaceClientLive } from "./workspace/http/client.js"
import { limitStdoutBacklog, loggingLayer, logSettingsFromEnv, makeWriter } from "./observability/logging.js"
import { observeMalformed, observeOwnAnswers } from "./observability/requests.js"
import { Observability, observabilityConfig } from "./observability/Observability.js"
import { otlpTracingLayer } from "./observability/tracing.js"
import { withWorkspaceMetrics } from "./observability/workspace.js"
import { FiberCountLive } from "./observability/metrics.js"
import { collectStartupGarbage } from "./lib/reducingCollection.js"

/** GET /v1/tasks/:taskId/events/stream (src/api/events.ts), its path as the router reads it (routerPath). */
const EVENT_STREAM_PATH = /^\/v1\/tasks\/.+\/events\/stream$/

/** The demo fixture's tenant, bound in embedded mode when SVC_TENANT_SLUG is unset. */
const DEMO_TENANT = DEMO_TENANT_SLUG

const databaseFile = databaseLabel

/** The drain of this process's two listeners (the gateway's port and the admin listener). */
const drain = new Drain()

const urlOf = (host: string, port: number) => `http://${host.includes(":") ? `[${host}]` : host}:${port}`

class AdminStartError extends Data.TaggedError("AdminStartError")<{ readonly message: string }> {}

/** Where the admin listener ended up (its port may have been chosen at start); None when there is none. */
class AdminAddress extends Context.Service<AdminAddress, Option.Option<string>>()("main/AdminAddress") {}

/** The admin listener: WorkspaceApi of every tenant, on its own Node server. */
const adminListener = (
  listen: AdminListen,
  token: Option.Option<Redacted.Redacted<string>>,
  config: TenantConfigShape,
  limits: ServerLimits
) =>
  Layer.effect(
    AdminAddress,
    Effect.gen(function*() {
      // Made on the first admin request (the port is open, and its errors reported, at start):
      // the multi-tenant WorkspaceApi costs an idle gateway nothing (bench S6).
      const scope = yield* Effect.scope
      const context = yield* Effect.context<EmbeddedWorkspace>()
      const app = yield* Effect.cached(
        adminWorkspaceApp({
          maxBodyBytes: config.maxBodyBytes,
          maxJsonItems: config.maxJsonItems,
          tracing: config.tracing,
          adminToken: Option.getOrUndefined(token)
        }).pipe(Scope.provide(scope), Effect.provide(context))
      )
      const server = yield* HttpServer.HttpServer
      yield* server.serve(Effect.flatten(app))
      const address = server.address
      return Option.some(
        address._tag === "UnixPathAddress" ? address.path : urlOf(NetAddress.formatIp(address.address), address.port)
      )
    })
  ).pipe(
    Layer.provide(Layer.merge(
      Layer.effect(
        HttpServer.HttpServer,
        NodeHttpServer.make(() => createGatewayServer(config.maxBodyBytes, { ...limits, probePaths: [], streams: undefined }, drain), {
          port: listen.port,
          host: listen.host,
          backlog: LISTEN_BACKLOG
        })
          .pipe(Effect.mapError((e) => {
            const cause = e.cause as { code?: unknown; message?: unknown } | undefined
            const reason =
              describeListenError(cause, { ...listen, hostSetting: "SVC_ADMIN_HOST", portSetting: "SVC_ADMIN_PORT" }) ??
                String(cause?.message ?? e.message)
            // Unset, the port is PORT + 1 (AdminConfig.ts): say so, a replica's PORT may be the culprit.
            const derived = process.env.SVC_ADMIN_PORT === undefined ? "SVC_ADMIN_PORT is unset, so PORT + 1; " : ""
            return new AdminStartError({
              message: `Cannot open the admin listener on ${urlOf(listen.host, listen.port)} ` +
                `(${derived}SVC_ADMIN_PORT=off runs none): ${reason}`
            })
          }))
      ),
      NodeHttpServer.layerHttpServices
    ))
  )

/**
 * What the HTTP app needs of the platform (NodeHttpServer.layerHttpServices without the terminal,
 * stdio and child-process services, which nothing serving a request uses): every service here is
 * in every request's context, and HttpApi copies that context for every request (bench/PROFILE.md,
 * "S1, third pass"), so each one left out is a copy less per request.
 */
const HttpServices = Layer.mergeAll(NodeHttpPlatform.layer, Etag.layerWeak, NodeFileSystem.layer, NodePath.layer)

const main = Effect.gen(function*() {
  const dotEnv = describeDotEnv()
  if (dotEnv !== undefined) yield* Effect.logInfo(dotEnv)
  // A misspelt setting would otherwise be ignored without a word.
  for (const warning of unknownSettingWarnings()) yield* Effect.logWarning(warning)
  const settings = yield* tenantConfigFromEnv
  const serverLimits = yield* serverLimitsConfig
  const streamSettings = yield* eventStreamSettingsFromEnv
  // The gateway's port: the probes keep a reserve past the connection cap, and one client may
  // hold at most its share of the event streams (src/http/server/nodeServer.ts).
  const streamsPerClient = yield* intSetting(
    "SVC_EVENT_STREAMS_PER_CLIENT",
    Math.max(1, Math.floor(streamSettings.maxStreams / 4))
  )
  const limits: ServerLimits = {
    ...serverLimits,
    probePaths: ["/v1/health", "/readyz"],
    streams: { path: EVENT_STREAM_PATH, perClient: streamsPerClient },
    streamedBodies: RAW_UPLOAD_ROUTE
  }
  const graceMs = yield* shutdownGraceConfig
  const observability = yield* observabilityConfig
  const embedded = Option.isNone(settings.workspaceUrl)
  if (!embedded) for (const warning of ignoredWithWorkspaceService()) yield* Effect.logWarning(warning)
  const config: TenantConfigShape = embedded && Option.isNone(settings.tenantSlug)
    ? { ...settings, tenantSlug: Option.some(DEMO_TENANT) }
    : settings
  // Admin settings matter only where there is an admin listener (embedded mode).
  const admin: AdminSettings = embedded ? yield* adminSettings : { listen: Option.none(), token: Option.none() }
  // With identity at the edge, the admin listener (every tenant's workspace API, writes as any
  // actor) would be the way around it for whatever reaches it, loopback included: a token, or none.
  // Who acts, read once: a bad setting or an unreadable JWKS file stops the start here, before a
  // port or the database opens (failing inside the app's layers left a start hanging once in CI).
  const identity = yield* identityConfigFromEnv
  if (identity.jwt !== undefined && identity.jwt.jwks._tag === "File") {
    yield* Effect.tryPromise({
      try: () => makeKeySet(identity.jwt!.jwks, { fetchTimeoutMs: 0, cooldownMs: 0, onWarning: () => {} }),
      catch: (e) => invalidSetting(e instanceof Error ? e.message : String(e))
    })
  }
  if (Option.isSome(admin.listen) && Option.isNone(admin.token)) {
    const mode = identity.jwt !== undefined ? "SVC_JWT_JWKS" : identity.header !== undefined ? "SVC_ACTOR_HEADER" : undefined
    if (mode !== undefined) {
      return yield* Effect.fail(invalidSetting(
        `SVC_ADMIN_TOKEN is not set, but ${mode} names who acts on the gateway's port: the admin listener ` +
          `(${urlOf(admin.listen.value.host, admin.listen.value.port)}, every tenant's workspace API) would let whatever ` +
          `reaches it act as anyone. Set SVC_ADMIN_TOKEN (at least 16 characters), or SVC_ADMIN_PORT=off`
      ))
    }
  }

  const embeddedWorkspace = EmbeddedWorkspaceLive
  // The gateway's calls are measured (/metrics' workspace_*), the admin listener's are not.
  const measuredEmbedded = withWorkspaceMetrics(embeddedWorkspace)
  const workspace = Option.match(settings.workspaceUrl, {
    onSome: (url) =>
      withWorkspaceMetrics(Layer.unwrap(Effect.map(workspaceToken, (token) =>
        HttpWorkspaceClientLive(url, {
          timeoutMs: config.workspaceTimeoutMs,
          retries: config.workspaceRetries,
          maxConnections: config.workspaceMaxConnections,
          tracing: config.tracing,
          token: Option.getOrUndefined(token)
        })))),
    onNone: () => measuredEmbedded
  })

  // Open the port only once the workspace has started: NodeHttpServer listens when its layer is
  // built but attaches the request handler only when the app is served, and Node leaves a request
  // arriving in between unanswered. Layers are memoized by reference: GatewayLive and the admin
  // listener get this same workspace instance.
  // The answers the Node server gives itself, logged and counted like the application's.
  limitStdoutBacklog(observability.log.backlogBytes)
  const ownLog = { line: makeWriter().line, log: observability.log }
  const server = Layer.provide(
    Layer.merge(
      NodeHttpServer.layerServer(
        () =>
          createGatewayServer(config.maxBodyBytes, limits, drain, observeOwnAnswers(ownLog), observeMalformed(ownLog)),
        { port: config.port, host: config.host, backlog: LISTEN_BACKLOG }
      ),
      HttpServices
    ),
    workspace
  )

  // Readiness beside the app: the same instance (layers are memoized) serves /readyz and the
  // start-up check below.
  // The gateway's port gets the connect page of this tenant's sessions and the decision links' pages
  // (src/workspace/server/linkRoutes.ts), nothing else of the workspace.
  const gateway = embedded
    ? gatewayLive(Layer.merge(GlConnectRoutes(config.tenantSlug), DecisionLinkRoutes), [...GL_CONNECT_ROUTES, ...DECISION_LINK_ROUTES]).pipe(Layer.provide(measuredEmbedded))
    : GatewayLive
  const app = Layer.merge(gateway, Readiness.layer).pipe(
    Layer.provide(Layer.succeed(ProcessDrain, drain)),
    Layer.provide(Observability.make(observability)),
    Layer.provide(otlpTracingLayer(observability.otlp)),
    Layer.provide(workspace),
    Layer.provide(FileFetcherLive),
    Layer.provide(IngestConfig.fromEnv),
    Layer.provide(TenantConfig.make(config)),
    Layer.provide(IdentityConfig.make(identity)),
    Layer.provide(server)
  )

  const adminLayer = Option.match(admin.listen, {
    onNone: () => Layer.succeed(AdminAddress, Option.none()),
    onSome: (listen) => Layer.provide(adminListener(listen, admin.token, config, limits), embeddedWorkspace)
  })

  const url = urlOf(config.host, config.port)
  const startupLog = Effect.gen(function*() {
    const tenant = Option.getOrElse(config.tenantSlug, () => "(none: tenant endpoints answer 503)")
    const bound = embedded && Option.isNone(settings.tenantSlug)
      ? `${tenant} (the demo tenant: SVC_TENANT_SLUG is unset)`
      : tenant
    const upstream = embedded
      ? `embedded, database ${databaseFile((yield* embeddedSettings).url)}`
      : `workspace service at ${Option.getOrThrow(settings.workspaceUrl)}`
    const adminUrl = yield* AdminAddress
    const adminLine = !embedded
      ? "none in this process (the workspace service serves the registry)"
      : Option.match(adminUrl, {
        onNone: () => "off (SVC_ADMIN_PORT=off)",
        onSome: (base) =>
          `${base}${WORKSPACE_PREFIX} (every tenant's workspace API and agent registry; ` +
          `${Option.isSome(admin.token) ? "Authorization: Bearer <SVC_ADMIN_TOKEN> required" : "no token: keep it on loopback"}; ` +
          `docs ${base}${WORKSPACE_PREFIX}/docs, OpenAPI ${base}${WORKSPACE_OPENAPI_PATH})`
      })
    const identityLine = describeIdentity(identity)
    yield* Effect.logInfo(
      `tenant gateway listening on ${url}\n  tenant:    ${bound}\n  workspace: ${upstream}\n  console:   ${url}/\n` +
        `  identity:  ${identityLine}\n  docs:      ${url}/docs (OpenAPI at ${url}/openapi.json)\n  admin:     ${adminLine}`
    )
    // Said at once, not with the next batch of lines (up to 25 ms later): whoever starts the
    // process and sees its port answer can read where everything is.
    yield* Effect.sync(() => makeWriter().flush())
    // Start-up leaves its garbage in sparse old-generation pages; with `--expose-gc` (npm start)
    // a memory-reducing collection now compacts them and returns the pages (src/lib/reducingCollection.ts).
    if ("gc" in globalThis) yield* Effect.forkChild(Effect.sync(collectStartupGarbage).pipe(Effect.delay("100 millis")))
    // A mistyped SVC_TENANT_SLUG or an unreachable upstream is said at start, not only by /readyz.
    const readiness = yield* Readiness
    yield* Effect.forkScoped(Effect.flatMap(readiness.check, (verdict) =>
      verdict.ready
        ? Effect.void
        : Effect.logWarning(`not ready: ${verdict.reason}; GET ${url}/readyz answers 503 until that changes`)))
  })

  // A listener or the database that cannot open is said at once, before what opened is released.
  // The admin listener opens after the gateway's port: a second gateway started on a taken PORT
  // (whose admin port, PORT + 1, is taken too) is told about PORT, not about the admin port.
  // Built after the app but not inside its context (provideMerge would hand the admin app the
  // gateway's router services; its requests then answered 499).
  const listeners = Layer.flatMap(app, (context) => Layer.merge(Layer.succeedContext(context), adminLayer))
  return yield* launchDrained(listeners.pipe(Layer.tapError(failStart)), {
    drain,
    graceMs,
    onStart: (context) => Effect.provide(startupLog, context)
  })
})

// Bad settings, a bad fixture or a port in use end the process with the reason, not a stack.
// Exit 1 then, even with a connection of the failed start still open (failStart.ts). After a
// signal, the exit code is the drain's: 0, or 1 when it had to cut (http/server/Drain.ts).
// FiberCountLive: every fiber counted for /metrics' effect_fiber_active (observability/metrics.ts).
// An empty variable (`NAME=`) is a value, refused by name where a setting cannot be empty, as it
// always was: Effect 4's environment provider would otherwise drop it as unset.
NodeRuntime.runMain(
  main.pipe(
    Effect.catch(failStart),
    Effect.provide(Layer.merge(loggingLayer(logSettingsFromEnv()), FiberCountLive)),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ preserveEmptyStrings: true }))
  ),
  {
    teardown: startFailureTeardown(drainTeardown(drain))
  }
)
