/**
 * `npm run workspace`: the embedded workspace served on its own as WorkspaceApi, so a gateway
 * started with SVC_WORKSPACE_URL reaches it over HTTP like any workspace service. It is the
 * admin surface (every tenant's data): with SVC_ADMIN_TOKEN set every WorkspaceApi request,
 * docs and OpenAPI included, needs `Authorization: Bearer <token>` (the gateway sends its
 * SVC_WORKSPACE_TOKEN); without it the server only binds a loopback HOST. The GL connect page
 * and its completion (`/workspace/gl/connect/<consumerId>[/complete]`) stay open to the browser
 * holding the session link.
 * Settings: SVC_WORKSPACE_PORT (default 4000), HOST, SVC_ADMIN_TOKEN, SVC_DATABASE_URL,
 * SVC_SEED_FILE, SVC_PUBLIC_URL, SVC_SHUTDOWN_GRACE_MS, SVC_LOG_LEVEL, SVC_LOG_FORMAT; from the environment, and from `.env` in the
 * working directory for what the environment does not set (src/config/dotEnv.ts).
 * Stop: SIGTERM or SIGINT drains it like the gateway (src/http/server/Drain.ts): exit 0, or 1 when
 * the grace period ran out.
 */
// First: `.env` fills the environment before anything reads a setting (as for the gateway: the
// file .env.example describes names this process's settings too).
import { describeDotEnv } from "../../config/dotEnv.js"
// Then every JSON.parse of the process reads escaped keys as written (V8's key bug).
import "../../http/jsonParseFix.js"
// A server too: Node's tick objects keep their maps (src/lib/tickObjectMaps.ts).
import "../../lib/tickObjectMaps.js"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Drain, drainTeardown, launchDrained } from "../../http/server/Drain.js"
import { describeListenError, failStart, startFailureTeardown } from "../../http/server/failStart.js"
import { createGatewayServer } from "../../http/server/nodeServer.js"
import { LISTEN_BACKLOG, serverLimitsConfig, shutdownGraceConfig } from "../../http/server/ServerLimits.js"
import { defaultOf, defaultTextOf } from "../../config/settings.js"
import { intSetting, optionalBaseUrlSetting } from "../../config/read.js"
import { unknownSettingWarnings } from "../../config/unknownSettings.js"
import { loggingLayer, logSettingsConfig, logSettingsFromEnv, makeWriter } from "../../observability/logging.js"
import { checkExposure, tokenSetting } from "./AdminConfig.js"
import { standaloneWorkspaceApp } from "./mount.js"
import { DEFAULT_MAX_BODY_BYTES } from "./server.js"
import { WORKSPACE_OPENAPI_PATH } from "../../upstream/WorkspaceApi.js"
import { databaseLabel, embeddedSettings, makeEmbeddedLayer } from "../embedded/layer.js"

const drain = new Drain()

class WorkspaceListenError extends Data.TaggedError("WorkspaceListenError")<{ readonly message: string }> {}

const main = Effect.gen(function*() {
  const dotEnv = describeDotEnv()
  if (dotEnv !== undefined) yield* Effect.logInfo(dotEnv)
  // A misspelt setting (in the environment or .env) would otherwise be ignored without a word.
  for (const warning of unknownSettingWarnings(process.env, "this workspace service")) yield* Effect.logWarning(warning)
  // The log's level and format, as the gateway's (the logger below took them already; a bad one
  // is refused here, by name).
  yield* logSettingsConfig()
  const port = yield* Config.Port("SVC_WORKSPACE_PORT").pipe(Config.withDefault(defaultOf("SVC_WORKSPACE_PORT")))
  const host = yield* Config.String("HOST").pipe(Config.withDefault(defaultTextOf("HOST")))
  const token = yield* tokenSetting("SVC_ADMIN_TOKEN")
  yield* Effect.fromResult(checkExposure("HOST", host, token))
  const maxBodyBytes = DEFAULT_MAX_BODY_BYTES
  const maxJsonItems = yield* intSetting("SVC_MAX_JSON_ITEMS")
  const limits = yield* serverLimitsConfig
  const graceMs = yield* shutdownGraceConfig
  const settings = yield* embeddedSettings
  const explicitPublicUrl = yield* optionalBaseUrlSetting("SVC_PUBLIC_URL")
  const { url } = settings
  const serve = Layer.unwrap(
    Effect.map(standaloneWorkspaceApp(token, { maxBodyBytes, maxJsonItems }), (app) => HttpServer.serve(app))
  )
  const base = `http://${host.includes(":") ? `[${host}]` : host}:${port}`
  // GL connect links point at this process unless SVC_PUBLIC_URL says otherwise.
  const workspace = makeEmbeddedLayer({
    ...settings,
    publicUrl: Option.getOrElse(explicitPublicUrl, () => base),
    // The link page is the gateway's (embedded mode); a gateway in front of this service serves none.
    linksUnavailable: "Decision links are made by a gateway with its embedded workspace (its admin listener): " +
      "this workspace service serves no link page",
    // It serves every tenant: no tenant's webhooks wait for another process.
    linkTenantSlug: undefined
  })
  return yield* launchDrained(
    serve.pipe(
      Layer.provide(workspace),
      Layer.provide(
        // Name this process's own port setting (the gateway's words say PORT). Layer has no mapError in Effect 4.
        Layer.effectContext(Effect.mapError(
          Layer.build(NodeHttpServer.layer(() => createGatewayServer(maxBodyBytes, limits, drain), { port, host, backlog: LISTEN_BACKLOG })),
          (e) => {
            const reason = describeListenError(e.cause, { host, port, hostSetting: "HOST", portSetting: "SVC_WORKSPACE_PORT" })
            return reason === undefined ? e : new WorkspaceListenError({ message: reason })
          }
        ))
      )
    ),
    {
      drain,
      graceMs,
      onStart: () =>
        Effect.andThen(
          Effect.logInfo(
            `workspace service listening on ${base}\n  database: ${databaseLabel(url)}\n  OpenAPI:  ${base}${WORKSPACE_OPENAPI_PATH}` +
              `\n  access:   ${Option.isSome(token) ? "Authorization: Bearer <SVC_ADMIN_TOKEN> required" : "no token (loopback only)"}`
          ),
          // Written now, not at the log's next flush (up to 25 ms on): a client that sees the port
          // answer can read where everything is, as the gateway's start-up log.
          Effect.sync(() => makeWriter().flush())
        )
    }
  )
})

// After a failed start, exit 1 even with a connection of it still open (failStart.ts).
// An empty variable (`NAME=`) is a value, as it always was (Effect 4's env provider drops it).
const env = ConfigProvider.fromEnv({ preserveEmptyStrings: true })
NodeRuntime.runMain(
  main.pipe(
    Effect.catch(failStart),
    Effect.provide(loggingLayer(logSettingsFromEnv())),
    Effect.provideService(ConfigProvider.ConfigProvider, env)
  ),
  { teardown: startFailureTeardown(drainTeardown(drain)) }
)
