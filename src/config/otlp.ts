/**
 * The standard OpenTelemetry trace-export settings (OTEL_*), read once at start; what they mean
 * is described where the export is built (src/observability/tracing.ts). Here, below the
 * services, so that TenantConfig can default SVC_TRACING from them without importing the export.
 */
import * as Config from "effect/Config"
import { allSettings } from "./allSettings.js"
import { defaultOf, defaultTextOf, setting } from "./settings.js"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

/** A setting refused by our own rule: the error names it (`path`) and says what it takes. */
export const invalidData = (path: ReadonlyArray<string>, message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer(path, new SchemaIssue.InvalidValue({ message }))))

export interface OtlpSettings {
  readonly url: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Readonly<Record<string, string>>
  readonly serviceName: string | undefined
  readonly exportIntervalMs: number
  readonly maxBatchSize: number
}

const optionalString = (name: string) => Config.option(Config.String(name)).pipe(Config.map(Option.filter((s) => s.trim() !== "")))

/** `key=value,key2=value2` (values percent-decoded), as OTEL_EXPORTER_OTLP_HEADERS is written. */
export const parseOtlpHeaders = (text: string): Result.Result<Record<string, string>, string> => {
  const out: Record<string, string> = {}
  for (const part of text.split(",")) {
    if (part.trim() === "") continue
    const eq = part.indexOf("=")
    if (eq <= 0) return Result.fail(`expected key=value pairs separated by commas`)
    try {
      out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
    } catch {
      return Result.fail(`expected percent-encoded key=value pairs`)
    }
  }
  return Result.succeed(out)
}

const firstOf = (names: ReadonlyArray<string>) =>
  Config.all(names.map((n) => Config.map(optionalString(n), (v) => Option.map(v, (value) => ({ name: n, value })))))
    .pipe(Config.map((vs) => Option.firstSomeOf(vs)))

/** The OTLP trace export settings; None when no endpoint is set or export is disabled. */
export const otlpConfig: Config.Config<Option.Option<OtlpSettings>> = allSettings({
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(setting("OTEL_SDK_DISABLED").default === true)),
  exporter: Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault(defaultTextOf("OTEL_TRACES_EXPORTER"))),
  tracesEndpoint: firstOf(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]),
  endpoint: firstOf(["OTEL_EXPORTER_OTLP_ENDPOINT"]),
  protocol: firstOf(["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"]),
  headers: firstOf(["OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"]),
  serviceName: optionalString("OTEL_SERVICE_NAME"),
  delay: Config.Int("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(defaultOf("OTEL_BSP_SCHEDULE_DELAY"))),
  batch: Config.Int("OTEL_BSP_MAX_EXPORT_BATCH_SIZE").pipe(Config.withDefault(defaultOf("OTEL_BSP_MAX_EXPORT_BATCH_SIZE")))
}).pipe(
  Config.mapEffect((s): Effect.Effect<Option.Option<OtlpSettings>, Config.ConfigError> => {
    if (s.disabled || s.exporter.trim().toLowerCase() === "none") return Effect.succeed(Option.none())
    if (s.exporter.trim().toLowerCase() !== "otlp") {
      return Effect.fail(invalidData(["OTEL_TRACES_EXPORTER"], "expected otlp or none"))
    }
    const endpoint = Option.match(s.tracesEndpoint, {
      onSome: ({ name, value }) => ({ name, url: value.trim() }),
      onNone: () => Option.match(s.endpoint, {
        onSome: ({ name, value }) => ({ name, url: `${value.trim().replace(/\/+$/, "")}/v1/traces` }),
        onNone: () => undefined
      })
    })
    if (endpoint === undefined) return Effect.succeed(Option.none())
    try {
      const u = new URL(endpoint.url)
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http")
    } catch {
      return Effect.fail(invalidData([endpoint.name], "expected an http(s) URL of an OTLP/HTTP collector"))
    }
    const protocol = Option.match(s.protocol, { onNone: () => "http/protobuf", onSome: ({ value }) => value.trim() })
    if (protocol !== "http/protobuf" && protocol !== "http/json") {
      const name = Option.getOrThrow(s.protocol).name
      return Effect.fail(invalidData([name], "expected http/protobuf or http/json (grpc is not supported)"))
    }
    let headers: Record<string, string> = {}
    if (Option.isSome(s.headers)) {
      const parsed = parseOtlpHeaders(s.headers.value.value)
      if (Result.isFailure(parsed)) return Effect.fail(invalidData([s.headers.value.name], parsed.failure))
      headers = parsed.success
    }
    return Effect.succeed(Option.some({
      url: endpoint.url,
      protocol,
      headers,
      serviceName: Option.getOrUndefined(s.serviceName),
      exportIntervalMs: Math.max(100, s.delay),
      maxBatchSize: Math.max(1, s.batch)
    }))
  })
)
