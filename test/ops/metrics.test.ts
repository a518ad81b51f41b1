/**
 * GET /metrics in the Prometheus text format, read back with a Prometheus text parser
 * (parse-prometheus-text-format): requests by route template and status with a duration
 * histogram, upstream calls with duration and failures by kind, the outbox hooks, process metrics.
 */
import parse, { type PrometheusFamily } from "parse-prometheus-text-format"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { outboxMetrics } from "../../src/observability/metrics.js"
import { type OpsGateway, startOps } from "./support.js"

const TASK = "00000000-0000-4000-8000-000000000000"

const scrape = async (url: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${url}/metrics`, { headers })
  const text = await res.text()
  return { res, text, families: res.status === 200 ? parse(text) : [] }
}
/** The lines of one labelled series of a histogram, its labels dropped but `le`. */
const oneSeries = (text: string, name: string, labels: string) =>
  [
    `# TYPE ${name} histogram`,
    ...text.split("\n")
      .filter((l) => l.startsWith(`${name}_`) && l.includes(`{${labels}`))
      .map((l) => l.replace(`${labels},`, "").replace(`{${labels}}`, ""))
  ].join("\n") + "\n"

const family = (families: ReadonlyArray<PrometheusFamily>, name: string) => {
  const f = families.find((x) => x.name === name)
  expect(f, `${name} in /metrics`).toBeDefined()
  return f!
}

describe("GET /metrics", () => {
  let gw: OpsGateway
  beforeAll(async () => {
    gw = await startOps()
  })
  afterAll(() => gw.close())

  it("parses as Prometheus text and counts requests by route template and status", async () => {
    for (let i = 0; i < 3; i++) await (await fetch(`${gw.url}/v1/health`)).text()
    await (await fetch(`${gw.url}/v1/tasks/${TASK}/ui`)).text() // 404 from the workspace
    await (await fetch(`${gw.url}/v1/entities`)).text()
    await (await fetch(`${gw.url}/no/such/path`)).text()
    await new Promise((r) => setTimeout(r, 50))
    const { res, text, families } = await scrape(gw.url)
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    expect(text.endsWith("\n")).toBe(true)

    const requests = family(families, "http_requests_total")
    expect(requests.type).toBe("COUNTER")
    const count = (route: string, status: string) =>
      Number(requests.metrics.find((m) => m.labels?.route === route && m.labels?.status === status)?.value ?? 0)
    expect(count("/v1/health", "200")).toBeGreaterThanOrEqual(3)
    expect(count("/v1/tasks/:taskId/ui", "404")).toBeGreaterThanOrEqual(1)
    expect(count("unmatched", "404")).toBeGreaterThanOrEqual(1)
    // No label carries an id.
    for (const m of requests.metrics) expect(m.labels?.route).not.toContain(TASK)

    expect(family(families, "http_request_duration_seconds").type).toBe("HISTOGRAM")
    // The parser folds a labelled histogram into one sample: read one series on its own.
    const health = parse(oneSeries(text, "http_request_duration_seconds", 'method="GET",route="/v1/health"'))[0]!.metrics[0]!
    expect(Number(health.count)).toBeGreaterThanOrEqual(3)
    expect(health.buckets!["+Inf"]).toBe(health.count)
    expect(Object.keys(health.buckets!)).toContain("0.005")
  })

  it("measures upstream calls, with failures by kind", async () => {
    await (await fetch(`${gw.url}/v1/tasks/${TASK}/ui`)).text()
    const { families } = await scrape(gw.url)
    const calls = family(families, "workspace_calls_total")
    expect(calls.metrics.some((m) => m.labels?.operation === "resolveTenant" && m.labels?.outcome === "ok")).toBe(true)
    const failures = family(families, "workspace_call_failures_total")
    expect(failures.metrics.some((m) => m.labels?.operation === "getTask" && m.labels?.kind === "not_found")).toBe(true)
    expect(family(families, "workspace_call_duration_seconds").type).toBe("HISTOGRAM")
  })

  it("exposes the outbox hooks and the process metrics", async () => {
    outboxMetrics.backlog(3)
    outboxMetrics.delivered(2)
    outboxMetrics.deliveryFailed("unavailable")
    await scrape(gw.url) // the first scrape starts the event-loop monitor
    const { families } = await scrape(gw.url)
    expect(family(families, "outbox_backlog")).toMatchObject({ type: "GAUGE", metrics: [{ value: "3" }] })
    expect(Number(family(families, "outbox_deliveries_total").metrics[0]!.value)).toBeGreaterThanOrEqual(2)
    expect(family(families, "outbox_delivery_failures_total").metrics).toContainEqual({ value: expect.any(String), labels: { kind: "unavailable" } })
    expect(Number(family(families, "process_resident_memory_bytes").metrics[0]!.value)).toBeGreaterThan(10_000_000)
    expect(family(families, "process_cpu_seconds_total").type).toBe("COUNTER")
    for (const name of ["nodejs_heap_size_used_bytes", "process_start_time_seconds", "process_open_fds"]) family(families, name)
  })

  it("needs the bearer token when SVC_METRICS_TOKEN is set", async () => {
    const locked = await startOps({ metricsToken: "s3cret-token-value" })
    try {
      const denied = await scrape(locked.url)
      expect(denied.res.status).toBe(401)
      expect(JSON.parse(denied.text)).toMatchObject({ statusCode: 401, error: "Unauthorized" })
      expect((await scrape(locked.url, { authorization: "Bearer wrong" })).res.status).toBe(401)
      expect((await scrape(locked.url, { authorization: "Bearer s3cret-token-value" })).res.status).toBe(200)
      // The bearer form of RFC 6750 as the other listeners read it: any case, spaces around the token.
      expect((await scrape(locked.url, { authorization: "bearer  s3cret-token-value " })).res.status).toBe(200)
      expect((await scrape(locked.url, { authorization: "Bearer " })).res.status).toBe(401)
      expect((await scrape(locked.url, { authorization: "Bearer s3cret-token-value x" })).res.status).toBe(401)
    } finally {
      await locked.close()
    }
  })
})
