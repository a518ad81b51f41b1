/**
 * The gateway's metrics, recorded with Effect's `Metric` (one registry per process) and served
 * at GET /metrics in the Prometheus text format (./prometheus.ts).
 *
 * - HTTP: `http_requests_total{method,route,status}` and
 *   `http_request_duration_seconds{method,route}`; route is the route template
 *   (`/v1/tasks/:taskId/ui`), `unmatched` for a request no route took: labels never carry ids.
 * - Upstream workspace: `workspace_calls_total{operation,outcome}`,
 *   `workspace_call_duration_seconds{operation}` and
 *   `workspace_call_failures_total{operation,kind}` (kind: not_found, bad_request, conflict,
 *   unavailable, bad_gateway, timeout, defect, ...), per WorkspaceClient operation
 *   (./workspace.ts), in both the embedded and the HTTP mode.
 * - Outbox (signals recorded with a write, delivered after the commit): `outbox_backlog`,
 *   `outbox_deliveries_total`, `outbox_delivery_failures_total{kind}`. The relay reports through
 *   `outboxMetrics` below.
 * - Webhooks: `webhook_deliveries_total{outcome}`, `webhook_queue_pending`,
 *   `webhook_queue_oldest_age_seconds` (reported by the deliverer through `webhookMetrics`).
 * - Process: resident memory, heap, CPU seconds, open file descriptors, event-loop delay, start
 *   time (set when scraped).
 *
 * - Effect: `effect_fiber_active`, the fibers alive now (counted by `FiberCountLive`, below).
 *
 * Updates go through metrics with their labels bound once per label set and cached, so a
 * request costs a few map lookups, not a registry search.
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import { readdirSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

/** Seconds: 1 ms to 30 s. */
const LATENCY_BOUNDARIES = Metric.boundariesFromIterable([
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30
])

const gauge = (name: string, description: string) => Metric.gauge(name, { description })
const total = (name: string, description: string) => Metric.counter(name, { description, incremental: true })

export const httpRequests = total("http_requests_total", "HTTP requests answered, by method, route template and status")
export const httpRequestDuration = Metric.histogram("http_request_duration_seconds", {
  boundaries: LATENCY_BOUNDARIES,
  description: "Time from a request's arrival to the end of its response, by method and route template"
})
export const workspaceCalls = total("workspace_calls_total", "Calls to the upstream workspace, by operation and outcome (ok or failed)")
export const workspaceCallDuration = Metric.histogram("workspace_call_duration_seconds", {
  boundaries: LATENCY_BOUNDARIES,
  description: "Duration of calls to the upstream workspace (retries included), by operation"
})
export const workspaceCallFailures = total("workspace_call_failures_total", "Failed calls to the upstream workspace, by operation and kind")
export const outboxBacklog = gauge("outbox_backlog", "Signals recorded with a write and not yet delivered to the runbook engine")
export const outboxDeliveries = total("outbox_deliveries_total", "Signals delivered from the outbox")
export const webhookDeliveries = total(
  "webhook_deliveries_total",
  "Webhook delivery attempts, by outcome: delivered (2xx), retrying (failed, another attempt scheduled), failed (no more attempts), disabled (the subscription was disabled: 410 or failing too long)"
)
export const webhookQueueOldestAge = gauge("webhook_queue_oldest_age_seconds", "Age of the oldest undelivered webhook message, in seconds (0 when none)")
export const webhookQueuePending = gauge("webhook_queue_pending", "Undelivered webhook messages (counted up to 100,000)")
export const outboxDeliveryFailures = total("outbox_delivery_failures_total", "Failed outbox delivery attempts (retried with backoff), by kind")

// ---------------------------------------------------------------------------------------------
// Labelled metrics, cached: a metric with its attributes bound computes its series key once.

/** The context updates are made in: Effect's default (process-wide) metric registry. */
const REGISTRY = Context.empty()

/**
 * A metric and the context that carries its attributes, made once per label set: updating a
 * `Metric.withAttributes` metric adds its attributes to the context on every update.
 */
interface Labelled {
  readonly metric: Metric.Metric<number, unknown>
  readonly context: Context.Context<never>
}

const labelCache = new Map<string, Labelled>()
const MAX_LABEL_SETS = 10_000

const labelled = <S>(
  metric: Metric.Metric<number, S>,
  key: string,
  make: () => ReadonlyArray<readonly [string, string]>
): Labelled => {
  let cached = labelCache.get(key)
  if (cached === undefined) {
    if (labelCache.size >= MAX_LABEL_SETS) labelCache.clear()
    cached = {
      metric: metric as Metric.Metric<number, unknown>,
      context: Context.add(REGISTRY, Metric.CurrentMetricAttributes, Object.fromEntries(make()))
    }
    labelCache.set(key, cached)
  }
  return cached
}

const update = (series: Labelled, value: number) => series.metric.updateUnsafe(value, series.context)

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
export const UNMATCHED_ROUTE = "unmatched"

/**
 * One request's two series, found by route, then method, then status: every request records
 * them, so no key string, closure or context is made per request (a route's series are made
 * on its first request; the routes are the API's templates, the statuses a few dozen).
 */
interface RouteSeries {
  readonly duration: Labelled
  readonly byStatus: Map<number, Labelled>
}
const httpSeries = new Map<string, Map<string, RouteSeries>>()
let httpSeriesCount = 0

/** One answered HTTP request. `route` is the route template, or undefined when none matched. */
export const recordHttpRequest = (method: string, route: string | undefined, status: number, seconds: number): void => {
  const m = METHODS.has(method) ? method : "OTHER"
  const r = route ?? UNMATCHED_ROUTE
  let byMethod = httpSeries.get(r)
  if (byMethod === undefined) {
    // Bounded like the label cache: an unbounded set of routes cannot grow it without end.
    if (httpSeriesCount >= MAX_LABEL_SETS) {
      httpSeries.clear()
      httpSeriesCount = 0
    }
    byMethod = new Map()
    httpSeries.set(r, byMethod)
  }
  let series = byMethod.get(m)
  if (series === undefined) {
    series = { duration: labelled(httpRequestDuration, `d ${m} ${r}`, () => [["method", m], ["route", r]]), byStatus: new Map() }
    byMethod.set(m, series)
  }
  let requests = series.byStatus.get(status)
  if (requests === undefined) {
    requests = labelled(httpRequests, `r ${m} ${r} ${status}`, () => [["method", m], ["route", r], ["status", String(status)]])
    series.byStatus.set(status, requests)
    httpSeriesCount++
  }
  update(requests, 1)
  update(series.duration, seconds)
}

/** One call to the upstream workspace; `failure` is the failure kind, undefined when it succeeded. */
export const recordWorkspaceCall = (operation: string, seconds: number, failure: string | undefined): void => {
  update(
    labelled(workspaceCalls, `w ${operation} ${failure === undefined ? "ok" : "failed"}`, () => [
      ["operation", operation],
      ["outcome", failure === undefined ? "ok" : "failed"]
    ]),
    1
  )
  update(labelled(workspaceCallDuration, `wd ${operation}`, () => [["operation", operation]]), seconds)
  if (failure !== undefined) {
    update(labelled(workspaceCallFailures, `wf ${operation} ${failure}`, () => [["operation", operation], ["kind", failure]]), 1)
  }
}

/**
 * What the outbox relay reports (src/workspace/embedded/outbox.ts): plain synchronous calls, so
 * the relay can report from anywhere.
 */
export const outboxMetrics = {
  /** Signals recorded and not yet delivered, after each relay pass (or whenever it is known). */
  backlog: (pending: number): void => outboxBacklog.updateUnsafe(pending, REGISTRY),
  /** Signals delivered. */
  delivered: (count = 1): void => outboxDeliveries.updateUnsafe(count, REGISTRY),
  /** A delivery attempt that failed (it will be retried); `kind` e.g. not_found, unavailable, error. */
  deliveryFailed: (kind = "error"): void => update(labelled(outboxDeliveryFailures, `of ${kind}`, () => [["kind", kind]]), 1)
} as const

/** What the webhook deliverer reports (src/workspace/embedded/webhookDelivery.ts). */
export const webhookMetrics = {
  attempt: (outcome: "delivered" | "retrying" | "failed" | "disabled"): void =>
    update(labelled(webhookDeliveries, `wh ${outcome}`, () => [["outcome", outcome]]), 1),
  queue: (pending: number, oldestAgeSeconds: number): void => {
    webhookQueuePending.updateUnsafe(pending, REGISTRY)
    webhookQueueOldestAge.updateUnsafe(oldestAgeSeconds, REGISTRY)
  }
} as const

// ---------------------------------------------------------------------------------------------
// Process metrics, read when scraped.

const processStart = Date.now() / 1000 - process.uptime()

const processMetrics = {
  cpuUser: total("process_cpu_user_seconds_total", "User CPU time spent, in seconds"),
  cpuSystem: total("process_cpu_system_seconds_total", "System CPU time spent, in seconds"),
  cpu: total("process_cpu_seconds_total", "User and system CPU time spent, in seconds"),
  start: gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds"),
  rss: gauge("process_resident_memory_bytes", "Resident memory size, in bytes"),
  heapTotal: gauge("nodejs_heap_size_total_bytes", "V8 heap size, in bytes"),
  heapUsed: gauge("nodejs_heap_size_used_bytes", "V8 heap used, in bytes"),
  external: gauge("nodejs_external_memory_bytes", "Memory of C++ objects bound to JavaScript objects, in bytes"),
  fds: gauge("process_open_fds", "Open file descriptors"),
  lagP50: gauge("nodejs_eventloop_lag_p50_seconds", "Event-loop delay, median since the first scrape, in seconds"),
  lagP99: gauge("nodejs_eventloop_lag_p99_seconds", "Event-loop delay, 99th percentile since the first scrape, in seconds"),
  lagMax: gauge("nodejs_eventloop_lag_max_seconds", "Event-loop delay, maximum since the first scrape, in seconds"),
  fibers: gauge("effect_fiber_active", "The current count of active fibers")
}

// ---------------------------------------------------------------------------------------------
// Live fibers. Effect 4 keeps no fiber count unless runtime metrics are on, and its own
// (child_fibers_active and three counters) updates four registry series per fiber; this hook
// only adds and subtracts one number, and the gauge is set from it when scraped.

let fibersAlive = 0

const fiberCounter: Metric.FiberRuntimeMetricsService = {
  recordFiberStart: () => {
    fibersAlive++
  },
  recordFiberEnd: () => {
    fibersAlive--
  }
}

/** Counts the fibers started under it (main.ts provides it to the whole program). */
export const FiberCountLive: Layer.Layer<never> = Layer.succeed(Metric.FiberRuntimeMetrics, fiberCounter)

/** Started on the first scrape: a process nobody scrapes pays no timer. */
let loopDelay: ReturnType<typeof monitorEventLoopDelay> | undefined

const openFds = (): number | undefined => {
  try {
    return readdirSync("/proc/self/fd").length - 1 // the directory handle itself
  } catch {
    return undefined
  }
}

/** What the CPU counters were last set to (a counter only adds: the difference is added). */
const lastCpu = { user: 0, system: 0 }

/** Sets the process gauges to their values now (before a scrape renders the registry). */
export const sampleProcessMetrics = (): void => {
  const set = (m: Metric.Gauge<number>, v: number | undefined) => {
    if (v !== undefined && Number.isFinite(v)) m.updateUnsafe(v, REGISTRY)
  }
  const cpu = process.cpuUsage()
  const mem = process.memoryUsage()
  const user = cpu.user / 1e6 - lastCpu.user
  const system = cpu.system / 1e6 - lastCpu.system
  lastCpu.user += user
  lastCpu.system += system
  processMetrics.cpuUser.updateUnsafe(user, REGISTRY)
  processMetrics.cpuSystem.updateUnsafe(system, REGISTRY)
  processMetrics.cpu.updateUnsafe(user + system, REGISTRY)
  set(processMetrics.fibers, Math.max(0, fibersAlive))
  set(processMetrics.start, processStart)
  set(processMetrics.rss, mem.rss)
  set(processMetrics.heapTotal, mem.heapTotal)
  set(processMetrics.heapUsed, mem.heapUsed)
  set(processMetrics.external, mem.external)
  set(processMetrics.fds, openFds())
  if (loopDelay === undefined) {
    loopDelay = monitorEventLoopDelay({ resolution: 20 })
    loopDelay.enable()
  } else if (loopDelay.count > 0) {
    set(processMetrics.lagP50, loopDelay.percentile(50) / 1e9)
    set(processMetrics.lagP99, loopDelay.percentile(99) / 1e9)
    set(processMetrics.lagMax, loopDelay.max / 1e9)
  }
}
