/**
 * The operator-facing settings of the process (logs, CORS, metrics access, trace export) and
 * the `Observability` service main.ts provides from them. Without the service (tests that build
 * GatewayLive on their own) the gateway still gives every request an id and records metrics,
 * but writes no request log and sends no CORS headers.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { invalidSetting, quoteSetting } from "../config/settingErrors.js"
import { corsConfig, type CorsSettings } from "../http/input/cors.js"
import { type LogSettings, logSettingsConfig, makeWriter } from "./logging.js"
import { otlpConfig, type OtlpSettings } from "../config/otlp.js"

export interface ObservabilitySettings {
  readonly log: LogSettings
  readonly cors: CorsSettings
  /** When set, GET /metrics needs `Authorization: Bearer <token>` (SVC_METRICS_TOKEN). */
  readonly metricsToken: Option.Option<Redacted.Redacted<string>>
  readonly otlp: Option.Option<OtlpSettings>
}

export const observabilityConfig: Config.Config<ObservabilitySettings> = Config.all({
  log: logSettingsConfig(),
  cors: corsConfig,
  metricsToken: Config.option(Config.String("SVC_METRICS_TOKEN")).pipe(
    Config.mapEffect((token) =>
      Option.isSome(token) && token.value === ""
        ? Effect.fail(invalidSetting(`SVC_METRICS_TOKEN=${quoteSetting("SVC_METRICS_TOKEN", "")}: expected a non-empty value`))
        : Effect.succeed(Option.map(token, (t) => Redacted.make(t)))
    )
  ),
  otlp: otlpConfig
})

export interface ObservabilityService {
  readonly settings: ObservabilitySettings
  /** Where request lines go (stdout, buffered; tests pass their own). */
  readonly line: (text: string) => void
}

export class Observability extends Context.Service<Observability, ObservabilityService>()("observability/Observability") {
  static readonly make = (settings: ObservabilitySettings, line: (text: string) => void = makeWriter().line) =>
    Layer.succeed(Observability, { settings, line })
}
