/**
 * Gateway settings, read once at start with Effect Config. Every setting is listed with its
 * default in `.env.example`.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { allSettings } from "./allSettings.js"
import { intSetting, optionalBaseUrlSetting } from "./read.js"
import { defaultOf, defaultTextOf } from "./settings.js"
import { otlpConfig } from "./otlp.js"
import { unsetWhenEmpty } from "./unsetWhenEmpty.js"

export interface TenantConfigShape {
  /** The tenant this process is bound to; None leaves every tenant endpoint answering 503. */
  readonly tenantSlug: Option.Option<string>
  /** When set, POST /v1/tasks/:taskId/events needs this value in x-svc-events-key. */
  readonly eventsKey: Option.Option<Redacted.Redacted<string>>
  readonly host: string
  readonly port: number
  /** Request bodies above this many bytes answer 413 before they are read. */
  readonly maxBodyBytes: number
  /** JSON bodies nested deeper than this answer 400 (src/http/input/jsonInput.ts). */
  readonly maxJsonDepth: number
  /** JSON bodies holding more values than this answer 413 before they are parsed (src/http/input/jsonInput.ts). */
  readonly maxJsonItems: number
  /** How many next-step lookups one task list runs at once. */
  readonly nextStepConcurrency: number
  /** How many runbook lookups one workflow list runs at once. */
  readonly runbookConcurrency: number
  /**
   * A request span per request (it costs a large share of throughput): SVC_TRACING, by default
   * on only when traces are exported (OTEL_EXPORTER_OTLP_*).
   */
  readonly tracing: boolean
  /** Where the HTTP WorkspaceClient reaches the workspace service; None selects the embedded one. */
  readonly workspaceUrl: Option.Option<string>
  /**
   * Time after which an attempt of a call to the workspace service over HTTP is abandoned and
   * retried (while retries and the request's deadline remain; the last attempt may use all
   * the time left).
   */
  readonly workspaceTimeoutMs: number
  /** Retries of a failed or timed-out workspace call over HTTP (writes too: they carry an idempotency key). */
  readonly workspaceRetries: number
  /** Connections to the workspace service at most (downloads at most a third); more calls wait for one. */
  readonly workspaceMaxConnections: number
  /**
   * One deadline per request, counted from the moment its body has been received: every
   * upstream call, retry and backoff fits inside it. A 504 means it passed.
   */
  readonly requestDeadlineMs: number
}

export const tenantConfigFromEnv: Config.Config<TenantConfigShape> = allSettings({
  tenantSlug: unsetWhenEmpty("SVC_TENANT_SLUG"),
  eventsKey: unsetWhenEmpty("SVC_INTERNAL_EVENTS_KEY").pipe(Config.map(Option.map((key) => Redacted.make(key)))),
  host: Config.String("HOST").pipe(Config.withDefault(defaultTextOf("HOST"))),
  port: Config.Port("PORT").pipe(Config.withDefault(defaultOf("PORT"))),
  maxBodyBytes: intSetting("SVC_MAX_BODY_BYTES"),
  maxJsonDepth: intSetting("SVC_MAX_JSON_DEPTH"),
  maxJsonItems: intSetting("SVC_MAX_JSON_ITEMS"),
  nextStepConcurrency: intSetting("SVC_NEXT_STEP_CONCURRENCY"),
  runbookConcurrency: intSetting("SVC_RUNBOOK_CONCURRENCY"),
  // On by default only when traces are exported (OTEL_EXPORTER_OTLP_*, src/config/otlp.ts).
  tracing: Config.all([Config.option(Config.Boolean("SVC_TRACING")), otlpConfig]).pipe(
    Config.map(([explicit, otlp]) => Option.getOrElse(explicit, () => Option.isSome(otlp)))
  ),
  workspaceUrl: optionalBaseUrlSetting("SVC_WORKSPACE_URL"),
  workspaceTimeoutMs: intSetting("SVC_WORKSPACE_TIMEOUT_MS"),
  workspaceRetries: intSetting("SVC_WORKSPACE_RETRIES"),
  workspaceMaxConnections: intSetting("SVC_WORKSPACE_MAX_CONNECTIONS"),
  requestDeadlineMs: intSetting("SVC_REQUEST_DEADLINE_MS")
})

export class TenantConfig extends Context.Service<TenantConfig, TenantConfigShape>()("config/TenantConfig") {
  static readonly fromEnv = Layer.effect(TenantConfig, tenantConfigFromEnv)
  static readonly make = (config: TenantConfigShape) => Layer.succeed(TenantConfig, config)
}
