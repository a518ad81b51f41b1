/**
 * Gateway settings, read once at start with Effect Config. Every setting is listed with its
 * default in `.env.example`.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"

export interface TenantConfigShape {
  /** The tenant this process is bound to; None leaves every tenant endpoint answering 503. */
  readonly tenantSlug: Option.Option<string>
  /** When set, POST /v1/tasks/:taskId/events needs this value in x-svc-events-key. */
  readonly eventsKey: Option.Option<Redacted.Redacted<string>>
  readonly host: string
  readonly port: number
  /** Request bodies above this many bytes answer 413 before they are read. */
  readonly maxBodyBytes: number
  /** JSON bodies nested deeper than this answer 400 (src/http/jsonInput.ts). */
  readonly maxJsonDepth: number
  /** How many next-step lookups one task list runs at once. */
  readonly nextStepConcurrency: number
  /** How many runbook lookups one workflow list runs at once. */
  readonly runbookConcurrency: number
  /** A request span per request; off unless wanted (it costs a large share of throughput). */
  readonly tracing: boolean
  /** Where the HTTP WorkspaceClient reaches the workspace service; None selects the embedded one. */
  readonly workspaceUrl: Option.Option<string>
  /** Timeout of each call to the workspace service over HTTP. */
  readonly workspaceTimeoutMs: number
  /** Retries of idempotent workspace reads over HTTP. */
  readonly workspaceRetries: number
}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

export const tenantConfigFromEnv: Config.Config<TenantConfigShape> = Config.all({
  tenantSlug: Config.option(Config.nonEmptyString("SVC_TENANT_SLUG")),
  eventsKey: Config.option(Config.redacted(Config.nonEmptyString("SVC_INTERNAL_EVENTS_KEY"))),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  port: Config.port("PORT").pipe(Config.withDefault(3000)),
  maxBodyBytes: positiveInt("SVC_MAX_BODY_BYTES", 32 * 1024 * 1024),
  maxJsonDepth: positiveInt("SVC_MAX_JSON_DEPTH", 64),
  nextStepConcurrency: positiveInt("SVC_NEXT_STEP_CONCURRENCY", 50),
  runbookConcurrency: positiveInt("SVC_RUNBOOK_CONCURRENCY", 8),
  tracing: Config.boolean("SVC_TRACING").pipe(Config.withDefault(false)),
  workspaceUrl: Config.option(Config.url("SVC_WORKSPACE_URL").pipe(Config.map((u) => u.toString().replace(/\/$/, "")))),
  workspaceTimeoutMs: positiveInt("SVC_WORKSPACE_TIMEOUT_MS", 10_000),
  workspaceRetries: Config.integer("SVC_WORKSPACE_RETRIES").pipe(
    Config.validate({ message: "SVC_WORKSPACE_RETRIES must be 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(2)
  )
})

export class TenantConfig extends Context.Tag("TenantConfig")<TenantConfig, TenantConfigShape>() {
  static readonly fromEnv = Layer.effect(TenantConfig, tenantConfigFromEnv)
  static readonly make = (config: TenantConfigShape) => Layer.succeed(TenantConfig, config)
}
