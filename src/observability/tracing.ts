/**
 * Trace export over OTLP/HTTP with Effect's own OtlpTracer (effect/observability, no OpenTelemetry SDK),
 * configured by the standard OpenTelemetry settings. Without an endpoint nothing of it is
 * loaded: the module that exports is imported only when an endpoint is set.
 *
 * - OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), else OTEL_EXPORTER_OTLP_ENDPOINT with
 *   `/v1/traces` appended. Unset: no export.
 * - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (default)
 *   or http/json; grpc is not supported (start fails naming the setting).
 * - OTEL_EXPORTER_OTLP_TRACES_HEADERS / OTEL_EXPORTER_OTLP_HEADERS: `key=value,...`.
 * - OTEL_SERVICE_NAME (default tenant-gateway), OTEL_RESOURCE_ATTRIBUTES.
 * - OTEL_BSP_SCHEDULE_DELAY (ms between exports, default 5000), OTEL_BSP_MAX_EXPORT_BATCH_SIZE.
 * - OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none: no export.
 *
 * With an endpoint, SVC_TRACING defaults to true: a span per request (parented by the caller's
 * `traceparent`) and one per upstream HTTP call, which sends its own `traceparent` on.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as OtlpExporter from "effect/observability/OtlpExporter"
import * as Option from "effect/Option"
import type { OtlpSettings } from "../config/otlp.js"
import { defaultTextOf } from "../config/settings.js"

const DEFAULT_SERVICE_NAME = defaultTextOf("OTEL_SERVICE_NAME")

/**
 * The tracer exporting to the collector, or nothing (Layer.empty) without settings. The export
 * modules (OtlpTracer, its serializer, the fetch client) are imported here, on first use.
 */
export const otlpTracingLayer = (settings: Option.Option<OtlpSettings>): Layer.Layer<OtlpExporter.Flusher> =>
  Option.match(settings, {
    onNone: () => Layer.empty as Layer.Layer<OtlpExporter.Flusher>, // no tracer: nothing needs a Flusher then
    onSome: (s) =>
      Layer.unwrap(Effect.promise(async () => {
        const [OtlpTracer, OtlpSerialization, FetchHttpClient] = await Promise.all([
          import("effect/observability/OtlpTracer"),
          import("effect/observability/OtlpSerialization"),
          import("effect/http/FetchHttpClient")
        ])
        const hasServiceName = process.env.OTEL_RESOURCE_ATTRIBUTES?.includes("service.name=") === true
        return OtlpTracer.layer({
          url: s.url,
          headers: s.headers,
          exportInterval: Duration.millis(s.exportIntervalMs),
          maxBatchSize: s.maxBatchSize,
          resource: { serviceName: s.serviceName ?? (hasServiceName ? undefined : DEFAULT_SERVICE_NAME) },
          compression: "none"
        }).pipe(
          Layer.provide(s.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
          Layer.provide(FetchHttpClient.layer)
        )
      }))
  })
