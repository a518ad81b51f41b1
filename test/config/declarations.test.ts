/**
 * The settings' readers take their defaults and bounds from the declarations
 * (src/config/settings.ts): for every declared integer setting the reader that reads it gives the
 * declared default when it is unset, takes its declared bounds and refuses a value just past
 * them, naming the setting.
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { DEFAULT_EVENT_PAGE_BYTES } from "../../src/api/eventPaging.js"
import { DEFAULT_MAX_JSON_DEPTH } from "../../src/api/jsonValue.js"
import { identityConfigFromEnv } from "../../src/config/IdentityConfig.js"
import { otlpConfig } from "../../src/config/otlp.js"
import { logSettingsConfig } from "../../src/observability/logging.js"
import { defaultOf, SETTINGS, type SettingName } from "../../src/config/settings.js"
import { tenantConfigFromEnv } from "../../src/config/TenantConfig.js"
import { ingestConfigFromEnv } from "../../src/files/IngestConfig.js"
import { serverLimitsConfig, shutdownGraceConfig } from "../../src/http/server/ServerLimits.js"
import { mcpConfigFromEnv } from "../../src/mcp/McpConfig.js"
import { eventStreamSettingsFromEnv } from "../../src/services/EventStreams.js"
import { eventPageBytesSetting } from "../../src/services/taskEvents.js"
import { embeddedSettings } from "../../src/workspace/embedded/layer.js"
import { readEnv } from "../fixtures/config.js"

type Reader = readonly [config: Config.Config<any>, pick: (value: any) => unknown, env?: Record<string, string>]

const otlp = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" }
const jwt = { SVC_JWT_JWKS: "/dev/null", SVC_JWT_ISSUER: "https://issuer.test", SVC_JWT_AUDIENCE: "gateway" }

/** Each integer setting of the gateway's process, and the reader and field that hold it. */
const READERS: Partial<Record<SettingName, Reader>> = {
  PORT: [tenantConfigFromEnv, (c) => c.port],
  SVC_MAX_BODY_BYTES: [tenantConfigFromEnv, (c) => c.maxBodyBytes],
  SVC_MAX_JSON_DEPTH: [tenantConfigFromEnv, (c) => c.maxJsonDepth],
  SVC_MAX_JSON_ITEMS: [tenantConfigFromEnv, (c) => c.maxJsonItems],
  SVC_NEXT_STEP_CONCURRENCY: [tenantConfigFromEnv, (c) => c.nextStepConcurrency],
  SVC_RUNBOOK_CONCURRENCY: [tenantConfigFromEnv, (c) => c.runbookConcurrency],
  SVC_WORKSPACE_TIMEOUT_MS: [tenantConfigFromEnv, (c) => c.workspaceTimeoutMs],
  SVC_WORKSPACE_RETRIES: [tenantConfigFromEnv, (c) => c.workspaceRetries],
  SVC_WORKSPACE_MAX_CONNECTIONS: [tenantConfigFromEnv, (c) => c.workspaceMaxConnections],
  SVC_LOG_BACKLOG_BYTES: [logSettingsConfig(false), (c) => c.backlogBytes],
  SVC_REQUEST_DEADLINE_MS: [tenantConfigFromEnv, (c) => c.requestDeadlineMs],
  SVC_JWT_JWKS_TIMEOUT_MS: [identityConfigFromEnv, (c) => c.jwt.fetchTimeoutMs, jwt],
  SVC_JWT_JWKS_COOLDOWN_MS: [identityConfigFromEnv, (c) => c.jwt.cooldownMs, jwt],
  SVC_JWT_MAX_AGE: [identityConfigFromEnv, (c) => c.jwt.maxAgeSeconds, jwt],
  SVC_HEADERS_TIMEOUT_MS: [serverLimitsConfig, (c) => c.headersTimeoutMs],
  SVC_REQUEST_TIMEOUT_MS: [serverLimitsConfig, (c) => c.requestTimeoutMs],
  SVC_FIRST_BYTE_TIMEOUT_MS: [serverLimitsConfig, (c) => c.firstByteTimeoutMs, {
    SVC_HEADERS_TIMEOUT_MS: "2147483647",
    SVC_REQUEST_TIMEOUT_MS: "2147483647"
  }],
  SVC_KEEP_ALIVE_TIMEOUT_MS: [serverLimitsConfig, (c) => c.keepAliveTimeoutMs],
  SVC_MAX_HEADERS: [serverLimitsConfig, (c) => c.maxHeaders],
  SVC_MAX_CONNECTIONS: [serverLimitsConfig, (c) => c.maxConnections],
  SVC_MAX_CONNECTIONS_PER_CLIENT: [serverLimitsConfig, (c) => c.maxConnectionsPerClient],
  SVC_MAX_BODY_BYTES_IN_FLIGHT: [serverLimitsConfig, (c) => c.maxBodyBytesInFlight],
  SVC_BODY_BUDGET_WAIT_MS: [serverLimitsConfig, (c) => c.bodyBudgetWaitMs],
  SVC_MAX_BODY_BYTES_PER_CLIENT: [serverLimitsConfig, (c) => c.maxBodyBytesPerClient],
  SVC_MIN_BODY_BYTES_PER_SECOND: [serverLimitsConfig, (c) => c.minBodyBytesPerSecond],
  SVC_IDLE_COLLECT_MS: [serverLimitsConfig, (c) => c.idleCollectMs],
  SVC_TRUSTED_PROXY_HOPS: [serverLimitsConfig, (c) => c.clientAddress.hops],
  SVC_SHUTDOWN_GRACE_MS: [shutdownGraceConfig, (c) => c],
  SVC_DB_POOL_SIZE: [embeddedSettings, (c) => c.poolSize],
  SVC_DB_STATEMENT_TIMEOUT_MS: [embeddedSettings, (c) => c.statementTimeoutMs],
  SVC_DB_CONNECT_TIMEOUT_MS: [embeddedSettings, (c) => c.connectTimeoutMs],
  SVC_SIGNAL_LEASE_MS: [embeddedSettings, (c) => c.signalLeaseMs],
  SVC_DECISION_SETTLE_MS: [embeddedSettings, (c) => c.decisionSettleMs],
  SVC_DB_BUSY_TIMEOUT_MS: [embeddedSettings, (c) => c.busyTimeoutMs],
  SVC_DB_CHECKPOINT_INTERVAL_MS: [embeddedSettings, (c) => c.checkpointIntervalMs],
  SVC_DB_WAL_LIMIT_BYTES: [embeddedSettings, (c) => c.walLimitBytes],
  SVC_SIGNAL_BATCH_SIZE: [embeddedSettings, (c) => c.signalBatchSize],
  SVC_SIGNAL_CONCURRENCY: [embeddedSettings, (c) => c.signalConcurrency],
  SVC_SIGNAL_AWAIT_MS: [embeddedSettings, (c) => c.signalAwaitMs],
  SVC_GL_SESSION_TTL_MS: [embeddedSettings, (c) => c.glSessionTtlMs],
  SVC_WEBHOOK_TIMEOUT_MS: [embeddedSettings, (c) => c.webhooks.timeoutMs],
  SVC_WEBHOOK_CONCURRENCY: [embeddedSettings, (c) => c.webhooks.concurrency],
  SVC_WEBHOOK_DISABLE_AFTER_MS: [embeddedSettings, (c) => c.webhooks.disableAfterMs],
  SVC_INGEST_MAX_BYTES: [ingestConfigFromEnv, (c) => c.maxBytes],
  SVC_INGEST_FETCHES_AT_ONCE: [ingestConfigFromEnv, (c) => c.fetchesAtOnce],
  SVC_INGEST_CONNECT_TIMEOUT_MS: [ingestConfigFromEnv, (c) => c.connectTimeoutMs],
  SVC_INGEST_TIMEOUT_MS: [ingestConfigFromEnv, (c) => c.timeoutMs],
  SVC_INGEST_MAX_REDIRECTS: [ingestConfigFromEnv, (c) => c.maxRedirects],
  SVC_MCP_READ_MAX_BYTES: [mcpConfigFromEnv, (c) => c.readMaxBytes],
  SVC_MCP_AUTH_FAILURE_BURST: [mcpConfigFromEnv, (c) => c.authFailureBurst],
  SVC_MCP_AUTH_FAILURE_REFILL_MS: [mcpConfigFromEnv, (c) => c.authFailureRefillMs],
  SVC_MCP_MAX_BATCH: [mcpConfigFromEnv, (c) => c.maxBatch],
  SVC_EVENT_STREAMS_MAX: [eventStreamSettingsFromEnv, (c) => c.maxStreams],
  SVC_EVENTS_POLL_MS: [eventStreamSettingsFromEnv, (c) => c.pollMs],
  SVC_EVENTS_KEEPALIVE_MS: [eventStreamSettingsFromEnv, (c) => c.keepAliveMs],
  SVC_EVENTS_PAGE_BYTES: [eventPageBytesSetting, (c) => c],
  SVC_EVENTS_STREAM_STALL_MS: [eventStreamSettingsFromEnv, (c) => c.stallMs],
  OTEL_BSP_SCHEDULE_DELAY: [otlpConfig, (c) => Option.getOrThrow(c as Option.Option<{ exportIntervalMs: number }>).exportIntervalMs, otlp],
  OTEL_BSP_MAX_EXPORT_BATCH_SIZE: [otlpConfig, (c) => Option.getOrThrow(c as Option.Option<{ maxBatchSize: number }>).maxBatchSize, otlp]
}

/** Integer settings read elsewhere, each with the reason. */
const ELSEWHERE: Partial<Record<SettingName, string>> = {
  SVC_ADMIN_PORT: "a port, 0 or off, its default PORT + 1 (src/workspace/server/AdminConfig.ts; test/ops/portSetting.test.ts)",
  SVC_WORKSPACE_PORT: "read by npm run workspace's main (a port: test/ops/portSetting.test.ts)",
  SVC_EVENT_STREAMS_PER_CLIENT: "read by src/main.ts, its default a quarter of SVC_EVENT_STREAMS_MAX"
}

const integers = SETTINGS.filter((s) => s.type === "integer" || s.type === "port")

const read = (name: SettingName, env: Record<string, string>) => {
  const [config, pick, base = {}] = READERS[name]!
  return Result.map(readEnv(config, { ...base, ...env }), pick)
}

describe("declared settings and their readers", () => {
  it("every integer setting has a reader here (or a reason it is read elsewhere)", () => {
    expect(integers.map((s) => s.name).filter((n) => READERS[n] === undefined && ELSEWHERE[n] === undefined)).toEqual([])
  })

  it.each(integers.filter((s) => READERS[s.name] !== undefined).map((s) => [s.name, s] as const))(
    "%s: unset is the declared default, the bounds are the declared ones",
    (name, s) => {
      if (s.default !== undefined) expect(read(name, {})).toEqual(Result.succeed(s.default))
      if (s.min !== undefined) {
        expect(read(name, { [name]: String(s.min) })).toEqual(Result.succeed(s.min))
        if (s.min > 0) {
          const refused = read(name, { [name]: String(s.min - 1) })
          expect(Result.isFailure(refused)).toBe(true)
          expect(String(Result.isFailure(refused) && refused.failure)).toContain(name)
        }
      }
      if (s.max !== undefined && s.max < Number.MAX_SAFE_INTEGER) {
        expect(read(name, { [name]: String(s.max) })).toEqual(Result.succeed(s.max))
        expect(Result.isFailure(read(name, { [name]: String(s.max + 1) }))).toBe(true)
      }
    }
  )

  it("the contract's own defaults are the declared ones", () => {
    expect(DEFAULT_MAX_JSON_DEPTH).toBe(defaultOf("SVC_MAX_JSON_DEPTH"))
    expect(DEFAULT_EVENT_PAGE_BYTES).toBe(defaultOf("SVC_EVENTS_PAGE_BYTES"))
  })
})
