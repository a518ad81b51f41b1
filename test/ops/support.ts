/**
 * The gateway in this process on a real Node server (port 0), over the embedded store, with
 * the Observability service main.ts provides (request lines captured, not printed). Started with
 * `startOps`, stopped with its `close`.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as HttpServer from "effect/http/HttpServer"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { GatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { CORS_OFF, type CorsSettings } from "../../src/http/input/cors.js"
import { Observability, type ObservabilitySettings } from "../../src/observability/Observability.js"
import { instrumentWorkspaceClient } from "../../src/observability/workspace.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { TenantConfig, type TenantConfigShape } from "../../src/config/TenantConfig.js"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { defaultConfig, exampleFixture } from "../support/gateway.js"
import { storeLayer } from "../support/storeWorkspace.js"
import { portOf } from "../fixtures/http.js"
import { until } from "../support/waitFor.js"

export interface OpsGateway {
  readonly url: string
  /** Request log lines written so far (JSON format). */
  readonly lines: () => ReadonlyArray<Record<string, unknown>>
  readonly close: () => Promise<void>
}

export interface OpsOptions {
  readonly cors?: CorsSettings
  readonly config?: Partial<TenantConfigShape>
  /** Another WorkspaceClient than the embedded store (e.g. the HTTP client of a fake upstream). */
  readonly workspace?: Layer.Layer<WorkspaceClient>
  readonly metricsToken?: string
  readonly logLevel?: LogLevel.LogLevel
}

export const opsSettings = (options: OpsOptions = {}): ObservabilitySettings => ({
  log: { level: options.logLevel ?? "Info", format: "json" },
  cors: options.cors ?? CORS_OFF,
  metricsToken: options.metricsToken === undefined ? Option.none() : Option.some(Redacted.make(options.metricsToken)),
  otlp: Option.none()
})

export const startOps = async (options: OpsOptions = {}): Promise<OpsGateway> => {
  const written: Array<string> = []
  const workspace = options.workspace ??
    Layer.effect(WorkspaceClient, Effect.map(Effect.service(WorkspaceClient), instrumentWorkspaceClient)).pipe(
      Layer.provide(storeLayer(exampleFixture))
    )
  const config = { ...defaultConfig, ...options.config }
  const layer = GatewayLive.pipe(
    Layer.provide(Observability.make(opsSettings(options), (line) => void written.push(line))),
    Layer.provide(workspace),
    Layer.provide(FileFetcher.layer([inlineBase64])),
    Layer.provide(TenantConfig.make(config)),
    Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(config.maxBodyBytes), { port: 0, host: "127.0.0.1" }))
  )
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const port = portOf(Context.get(context, HttpServer.HttpServer).address)
  return {
    url: `http://127.0.0.1:${port}`,
    lines: () => written.map((l) => JSON.parse(l) as Record<string, unknown>),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Waits until `check` holds (request lines are written when Node closes the response). */
export const eventually = <A>(check: () => A | undefined, timeoutMs = 5000): Promise<A> =>
  until(check, { timeoutMs, everyMs: 10 })
