/**
 * Effect's metric registry in the Prometheus text exposition format (version 0.0.4), what
 * GET /metrics answers. Written here rather than through an OpenTelemetry metric producer and
 * @opentelemetry/exporter-prometheus: that pair measured +3 MB idle and +5 MB RSS after
 * scrapes (bench/PROFILE.md, S6), with 80 MB per process as the target; this is the whole of
 * the format Effect's metric kinds need: counters, gauges, histograms, summaries, frequencies.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { createHash, timingSafeEqual } from "node:crypto"
import { sampleProcessMetrics } from "./metrics.js"
import { errorResponse } from "../http/errorBody.js"

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/**
 * Effect 4's own runtime metrics (child_fiber*, when its runtime metrics are on), left out of
 * /metrics: not part of the documented set (README "Metrics"). The live fiber count is
 * `effect_fiber_active`, kept by ./metrics.ts.
 */
const EFFECT_RUNTIME_PREFIX = "child_fiber"

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

const EMPTY = Context.empty()

/** The text of every metric in `snapshot` (default: Effect's registry now). */
export const renderPrometheus = (snapshot: ReadonlyArray<Metric.Metric.Snapshot> = Metric.snapshotUnsafe(EMPTY)): string => {
  const families = new Map<string, Family>()
  const family = (name: string, type: Family["type"], help: string | undefined): Family | undefined => {
    let f = families.get(name)
    if (f === undefined) {
      f = { type, help, lines: [] }
      families.set(name, f)
    } else if (f.type !== type) {
      return undefined // one name, two kinds: keep the first
    }
    if (f.help === undefined) f.help = help
    return f
  }
  for (const metric of snapshot) {
    if (metric.id.startsWith(EFFECT_RUNTIME_PREFIX)) continue
    const name = metricName(metric.id)
    const labels: Labels = Object.entries(metric.attributes ?? {})
    const description = metric.description
    if (metric.type === "Counter") {
      const state = metric.state
      // A counter that may go down (Effect's `incremental: false`) is a gauge to Prometheus.
      family(name, state.incremental ? "counter" : "gauge", description)?.lines.push(
        `${name}${renderLabels(labels)} ${num(state.count)}`
      )
    } else if (metric.type === "Gauge") {
      family(name, "gauge", description)?.lines.push(`${name}${renderLabels(labels)} ${num(metric.state.value)}`)
    } else if (metric.type === "Histogram") {
      const state = metric.state
      const f = family(name, "histogram", description)
      if (f === undefined) continue
      for (const [boundary, count] of state.buckets) {
        f.lines.push(`${name}_bucket${renderLabels([...labels, ["le", num(boundary)]])} ${num(count)}`)
      }
      if (!state.buckets.some(([b]) => b === Infinity)) {
        f.lines.push(`${name}_bucket${renderLabels([...labels, ["le", "+Inf"]])} ${num(state.count)}`)
      }
      f.lines.push(`${name}_sum${renderLabels(labels)} ${num(state.sum)}`)
      f.lines.push(`${name}_count${renderLabels(labels)} ${num(state.count)}`)
    } else if (metric.type === "Summary") {
      const state = metric.state
      const f = family(name, "summary", description)
      if (f === undefined) continue
      for (const [quantile, value] of state.quantiles) {
        if (value !== undefined) f.lines.push(`${name}${renderLabels([...labels, ["quantile", num(quantile)]])} ${num(value)}`)
      }
      f.lines.push(`${name}_sum${renderLabels(labels)} ${num(state.sum)}`)
      f.lines.push(`${name}_count${renderLabels(labels)} ${num(state.count)}`)
    } else if (metric.type === "Frequency") {
      const state = metric.state
      const f = family(name, "counter", description)
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
