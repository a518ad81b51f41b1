/**
 * The gateway as the benchmark starts it (until then the real entry was not written): GatewayLive
 * on the gateway's Node server, over the embedded SQLite store either seeded from BENCH_FIXTURE
 * into a temp file (S1, S2: BENCH_WORKSPACE=memory, every next-step lookup delayed
 * BENCH_LOOKUP_MS; ./fixtureStore.ts) or on the database BENCH_DB prepared by prepare.ts (S3-S5:
 * BENCH_WORKSPACE=embedded).
 *
 * Settings: PORT, BENCH_FIXTURE (JSON file), BENCH_WORKSPACE, BENCH_DB, BENCH_LOOKUP_MS,
 * BENCH_MAX_BODY (bytes), BENCH_NEXT_STEP_CONCURRENCY.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { GatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { TenantConfig } from "../../src/config/TenantConfig.js"
import { makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import { fixtureStore } from "./fixtureStore.js"

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

const port = Number(env("PORT"))
const maxBodyBytes = Number(env("BENCH_MAX_BODY", String(32 * 1024 * 1024)))
const mode = env("BENCH_WORKSPACE", "memory")

const workspace = mode === "memory"
  ? fixtureStore(env("BENCH_FIXTURE"), Number(env("BENCH_LOOKUP_MS", "5")))
  : makeEmbeddedLayer({ url: env("BENCH_DB"), retryInterval: "1 hour" })

const app = GatewayLive.pipe(
  Layer.provide(workspace),
  Layer.provide(FileFetcher.layer([inlineBase64])),
  Layer.provide(TenantConfig.make({
    tenantSlug: Option.some("acme"),
    eventsKey: Option.none(),
    host: "127.0.0.1",
    port,
    maxBodyBytes,
    maxJsonDepth: 64,
    maxJsonItems: 1_000_000,
    nextStepConcurrency: Number(env("BENCH_NEXT_STEP_CONCURRENCY", "16")),
    runbookConcurrency: 8,
    tracing: false,
    workspaceUrl: Option.none(),
    workspaceTimeoutMs: 10_000,
    workspaceRetries: 0,
    workspaceMaxConnections: 192,
    requestDeadlineMs: 15_000
  })),
  Layer.provide(NodeHttpServer.layer(() => createGatewayServer(maxBodyBytes), { port, host: "127.0.0.1" }))
)

NodeRuntime.runMain(Layer.launch(app))
