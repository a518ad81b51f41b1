/**
 * Composition root: settings → Layers → serve. With SVC_WORKSPACE_URL the WorkspaceClient is
 * the HTTP client of WorkspaceApi; without it the embedded workspace runs in this process on a
 * local SQLite file (demo data on first start), and its API is served under /workspace too.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { IngestConfig } from "./files/IngestConfig.js"
import { FileFetcherLive } from "./files/providers/index.js"
import { GatewayLive } from "./http/Gateway.js"
import { failStart } from "./http/failStart.js"
import { createGatewayServer } from "./http/nodeServer.js"
import { TenantConfig, tenantConfigFromEnv, type TenantConfigShape } from "./services/TenantConfig.js"
import { WorkspaceRoutes } from "./workspace/api/mount.js"
import { databasePathOf, embeddedSettings, EmbeddedWorkspaceLive } from "./workspace/embedded/layer.js"
import { HttpWorkspaceClientLive } from "./workspace/http/client.js"

/** The demo fixture's tenant, bound in embedded mode when SVC_TENANT_SLUG is unset. */
const DEMO_TENANT = "acme"

const databaseFile = (url: string) => {
  const path = databasePathOf(url)
  return path.ok ? path.value : url
}

const main = Effect.gen(function*() {
  const settings = yield* tenantConfigFromEnv
  const embedded = Option.isNone(settings.workspaceUrl)
  const config: TenantConfigShape = embedded && Option.isNone(settings.tenantSlug)
    ? { ...settings, tenantSlug: Option.some(DEMO_TENANT) }
    : settings

  const workspace = Option.match(settings.workspaceUrl, {
    onSome: (url) =>
      HttpWorkspaceClientLive(url, { timeoutMs: config.workspaceTimeoutMs, retries: config.workspaceRetries, tracing: config.tracing }),
    onNone: () => Layer.provideMerge(WorkspaceRoutes, EmbeddedWorkspaceLive)
  })

  // Open the port only once the workspace has started: NodeHttpServer listens when its layer is
  // built but attaches the request handler only when the app is served, and Node leaves a request
  // arriving in between unanswered. Layers are memoized by reference: GatewayLive gets this same
  // workspace instance.
  const server = Layer.provide(
    NodeHttpServer.layer(() => createGatewayServer(config.maxBodyBytes), { port: config.port, host: config.host }),
    workspace
  )

  const app = GatewayLive.pipe(
    Layer.provide(workspace),
    Layer.provide(FileFetcherLive),
    Layer.provide(IngestConfig.fromEnv),
    Layer.provide(TenantConfig.make(config)),
    Layer.provide(server)
  )

  const url = `http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${config.port}`
  const startupLog = Effect.gen(function*() {
    const tenant = Option.getOrElse(config.tenantSlug, () => "(none: tenant endpoints answer 503)")
    const bound = embedded && Option.isNone(settings.tenantSlug)
      ? `${tenant} (the demo tenant: SVC_TENANT_SLUG is unset)`
      : tenant
    const upstream = embedded
      ? `embedded, database ${databaseFile((yield* embeddedSettings).url)}`
      : `workspace service at ${Option.getOrThrow(settings.workspaceUrl)}`
    yield* Effect.logInfo(
      `tenant gateway listening on ${url}\n  tenant:    ${bound}\n  workspace: ${upstream}\n  docs:      ${url}/docs (OpenAPI at ${url}/openapi.json)`
    )
  })

  return yield* Layer.launch(Layer.tap(app, () => startupLog))
})

// Bad settings, a bad fixture or a port in use end the process with the reason, not a stack.
NodeRuntime.runMain(main.pipe(Effect.catchAll(failStart)))
