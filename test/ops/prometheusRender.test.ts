/**
 * The /metrics text as Effect's PrometheusMetrics renders it here: Effect's own runtime metrics
 * (child_fiber*) left out, label values escaped so the text still parses, every kind typed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import parse from "parse-prometheus-text-format"
import { describe, expect, it } from "vitest"
import { renderPrometheus } from "../../src/observability/prometheus.js"

describe("renderPrometheus", () => {
  it("leaves Effect's runtime metrics out and keeps the rest parseable", async () => {
    await Effect.runPromise(Effect.gen(function*() {
      yield* Metric.update(Metric.gauge("child_fibers_active_test", { description: "Effect's own" }), 5)
      yield* Metric.update(
        Metric.counter("render_test_total", { description: "A counter\nwith a line break", incremental: true }).pipe(
          Metric.withAttributes({ route: "/v1/\"quoted\"\\back\nslash" })
        ),
        2
      )
      yield* Metric.update(
        Metric.histogram("render_test_seconds", { boundaries: Metric.boundariesFromIterable([0.1, 1]) }),
        0.5
      )
    }))
    const text = renderPrometheus()
    expect(text).not.toContain("child_fiber")
    const families = parse(text)
    const counter = families.find((f) => f.name === "render_test_total")
    expect(counter).toMatchObject({ type: "COUNTER", help: "A counter\nwith a line break" })
    expect(counter!.metrics[0]).toMatchObject({ value: "2", labels: { route: "/v1/\"quoted\"\\back\nslash" } })
    const histogram = families.find((f) => f.name === "render_test_seconds")
    expect(histogram?.type).toBe("HISTOGRAM")
    expect(text).toContain("render_test_seconds_bucket{le=\"+Inf\"} 1")
    // Still there in Effect's registry: only /metrics leaves it out.
    expect(Metric.snapshotUnsafe(Context.empty()).some((m) => m.id === "child_fibers_active_test")).toBe(true)
  })
})
