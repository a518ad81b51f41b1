/**
 * Effect's metric registry in the Prometheus text exposition format (version 0.0.4), what
 * GET /metrics answers. Written here rather than through @effect/opentelemetry's metric producer
 * and @opentelemetry/exporter-prometheus: that pair measured +3 MB idle and +5 MB RSS after
 * scrapes (bench/PROFILE.md, S6), with 80 MB per process as the target; this is the whole of
 * the format Effect's metric kinds need: counters, gauges, histograms, summaries, frequencies.
 */
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import type * as MetricPair from "effect/MetricPair"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, timingSafeEqual } from "node:crypto"
import { sampleProcessMetrics } from "./metrics.js"
import { errorResponse } from "../http/errorBody.js"

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** The prefix of the metrics the Effect runtime keeps by itself, left out of /metrics. */
const FIBERS_ACTIVE = "effect_fiber_active"
const EFFECT_RUNTIME_PREFIX = "effect_"

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const metricName = (name: string) => (NAME.test(name) ? name : name.replace(/[^a-zA-Z0-9_:]/g, "_").replace(/^([0-9])/, "_$1"))
const labelName = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, "_").replace(/^([0-9])/, "_$1")

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, "\\\"")
const escapeHelp = (v: string) => v.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

const num = (n: number | bigint): string => {
  if (typeof n === "bigint") return n.toString()
  if (Number.isNaN(n)) return "NaN"
  if (n === Infinity) return "+Inf"
  if (n === -Infinity) return "-Inf"
  return String(n)
}

type Labels = ReadonlyArray<readonly [string, string]>

const renderLabels = (labels: Labels): string =>
  labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${labelName(k)}="${escapeLabel(v)}"`).join(",")}}`

interface Family {
  readonly type: "counter" | "gauge" | "histogram" | "summary"
  help: string | undefined
  readonly lines: Array<string>
}

/** The text of every metric in `pairs` (default: Effect's registry now). */
export const renderPrometheus = (pairs: ReadonlyArray<MetricPair.MetricPair.Untyped> = Metric.unsafeSnapshot()): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: Option.Option<string>): Family | undefined => {
    let f = families.get(name)
    if (f === undefined) {
      f = { type, help: Option.getOrUndefined(help), lines: [] }
      families.set(name, f)
    } else if (f.type !== type) {
      return undefined // one name, two kinds: keep the first
    }
    if (f.help === undefined) f.help = Option.getOrUndefined(help)
    return f
  }
  for (const pair of pairs) {
    const key = pair.metricKey
    // Effect's own runtime counters (effect_fiber_*, kept by the default RuntimeMetrics flag):
    // not part of the documented set (README "Metrics"), their names and buckets are Effect's.
    // One is kept: the live fiber count, the plain signal of a leak per request.
    if (key.name.startsWith(EFFECT_RUNTIME_PREFIX) && key.name !== FIBERS_ACTIVE) continue
    const name = metricName(key.name)
    const labels: Labels = key.tags.map((t) => [t.key, t.value] as const)
    const state = pair.metricState
    if (MetricState.isCounterState(state)) {
      // A counter that may go down (Effect's `incremental: false`) is a gauge to Prometheus.
      const incremental = (key.keyType as { readonly incremental?: boolean }).incremental === true
      family(name, incremental ? "counter" : "gauge", key.description)?.lines.push(
        `${name}${renderLabels(labels)} ${num(state.count)}`
      )
    } else if (MetricState.isGaugeState(state)) {
      family(name, "gauge", key.description)?.lines.push(`${name}${renderLabels(labels)} ${num(state.value)}`)
    } else if (MetricState.isHistogramState(state)) {
      const f = family(name, "histogram", key.description)
      if (f === undefined) continue
      for (const [boundary, count] of state.buckets) {
        f.lines.push(`${name}_bucket${renderLabels([...labels, ["le", num(boundary)]])} ${num(count)}`)
      }
      if (!state.buckets.some(([b]) => b === Infinity)) {
        f.lines.push(`${name}_bucket${renderLabels([...labels, ["le", "+Inf"]])} ${num(state.count)}`)
      }
      f.lines.push(`${name}_sum${renderLabels(labels)} ${num(state.sum)}`)
      f.lines.push(`${name}_count${renderLabels(labels)} ${num(state.count)}`)
    } else if (MetricState.isSummaryState(state)) {
      const f = family(name, "summary", key.description)
      if (f === undefined) continue
      for (const [quantile, value] of state.quantiles) {
        if (Option.isSome(value)) f.lines.push(`${name}${renderLabels([...labels, ["quantile", num(quantile)]])} ${num(value.value)}`)
      }
      f.lines.push(`${name}_sum${renderLabels(labels)} ${num(state.sum)}`)
      f.lines.push(`${name}_count${renderLabels(labels)} ${num(state.count)}`)
    } else if (MetricState.isFrequencyState(state)) {
      const f = family(name, "counter", key.description)
      if (f === undefined) continue
      for (const [value, count] of state.occurrences) {
        f.lines.push(`${name}${renderLabels([...labels, ["key", value]])} ${num(count)}`)
      }
    }
  }
  let out = ""
  for (const [name, f] of families) {
    if (f.lines.length === 0) continue
    if (f.help !== undefined) out += `# HELP ${name} ${escapeHelp(f.help)}\n`
    out += `# TYPE ${name} ${f.type}\n`
    out += f.lines.join("\n") + "\n"
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// GET /metrics

const digest = (s: string) => createHash("sha256").update(s).digest()

/**
 * The /metrics handler: process metrics sampled, then the registry rendered. With `token`, a
 * request without `Authorization: Bearer <token>` answers 401 in the spec's error shape
 * (compared in constant time).
 */
export const metricsHandler = (token: Option.Option<Redacted.Redacted<string>>) => {
  const expected = Option.map(token, (t) => digest(Redacted.value(t)))
  return Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.sync(() => {
      if (Option.isSome(expected)) {
        const auth = request.headers["authorization"] ?? ""
        const given = /^Bearer (.+)$/i.exec(auth)?.[1]
        if (given === undefined || !timingSafeEqual(digest(given), expected.value)) {
          return errorResponse(401, "Unauthorized", "GET /metrics needs Authorization: Bearer <SVC_METRICS_TOKEN>", {
            "www-authenticate": "Bearer",
            "cache-control": "no-store"
          })
        }
      }
      sampleProcessMetrics()
      return HttpServerResponse.text(renderPrometheus(), {
        contentType: PROMETHEUS_CONTENT_TYPE,
        headers: { "cache-control": "no-store" }
      })
    }))
}
