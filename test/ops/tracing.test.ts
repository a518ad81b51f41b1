/**
 * With an OTLP endpoint configured (standard OTEL_* settings), request spans are
 * exported through @effect/opentelemetry, parented by the caller's traceparent; without one,
 * nothing of the exporter is loaded (the module graph of a process is checked).
 */
import { spawn } from "node:child_process"
import { createServer, type Server } from "node:http"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { staleness } from "../../scripts/build-if-stale.mjs"
import { runBuild } from "../../scripts/build.mjs"
import { BUILT_ENTRY, freePort, NPM_START_NODE_FLAGS } from "../support/process.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"

describe("trace export over OTLP/HTTP", { timeout: 120_000 }, () => {
  let collector: Server
  let collectorPort: number
  const bodies: Array<string> = []
  const dir = mkdtempSync(join(tmpdir(), "gateway-otlp-"))
  beforeAll(async () => {
    collector = createServer((req, res) => {
      let body = ""
      req.on("data", (c) => (body += c))
      req.on("end", () => {
        if (req.url === "/v1/traces") bodies.push(body)
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r))
    collectorPort = (collector.address() as { port: number }).port
  })
  afterAll(async () => {
    await new Promise((r) => collector.close(r))
    rmSync(dir, { recursive: true, force: true })
  })

  it("exports the request's span, a child of the caller's traceparent, with its route", async () => {
    const port = await freePort()
    // The built entry with npm start's flags (a start from the sources through tsx: 2.4-3.2 s of CPU more).
    const child = spawn(process.execPath, [...NPM_START_NODE_FLAGS, BUILT_ENTRY], {
      cwd: ROOT,
      env: {
        ...process.env,
        HOST: "127.0.0.1",
        PORT: String(port),
        SVC_ADMIN_PORT: "off",
        SVC_DATABASE_URL: `file:${join(dir, "t.db")}`,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collectorPort}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_BSP_SCHEDULE_DELAY: "200",
        OTEL_SERVICE_NAME: "gateway-under-test"
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    try {
      const deadline = Date.now() + 60_000
      for (;;) {
        if (child.exitCode !== null) throw new Error(output)
        const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)
        if (ok) break
        if (Date.now() > deadline) throw new Error(`not healthy:\n${output}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      const res = await fetch(`http://127.0.0.1:${port}/v1/entities`, {
        headers: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` }
      })
      expect(res.status).toBe(200)
      const until = Date.now() + 20_000
      while (!bodies.some((b) => b.includes(TRACE)) && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
      const body = bodies.find((b) => b.includes(TRACE))
      expect(body, `collector got: ${bodies.join("\n").slice(0, 500)}\n${output}`).toBeDefined()
      const spans = (JSON.parse(body!) as any).resourceSpans.flatMap((r: any) => r.scopeSpans.flatMap((s: any) => s.spans))
      const server = spans.find((s: any) => s.traceId === TRACE && s.parentSpanId === "00f067aa0ba902b7")
      expect(server).toBeDefined()
      expect(JSON.stringify(server.attributes)).toContain("/v1/entities")
      expect(body).toContain("gateway-under-test")
    } finally {
      child.kill("SIGTERM")
    }
  })
})

describe("without an OTLP endpoint", () => {
  it("the built entry loads nothing of the exporter: it is a chunk imported only when configured", async () => {
    if (staleness() !== undefined) await runBuild()
    const dist = join(ROOT, "dist")
    const seen = new Set<string>()
    const visit = (file: string) => {
      if (seen.has(file)) return
      seen.add(file)
      const text = readFileSync(join(dist, file), "utf8")
      for (const m of text.matchAll(/from\s*"\.\/(chunk-[A-Z0-9]+\.js)"/g)) visit(m[1]!)
    }
    visit("main.js")
    const eager = [...seen].map((f) => readFileSync(join(dist, f), "utf8")).join("\n")
    // What only the exporter's modules hold: the OTLP payload shape and their service tags.
    expect(eager).not.toContain("resourceSpans")
    expect(eager).not.toContain("@effect/opentelemetry/OtlpSerialization")
    expect(seen.size).toBeGreaterThan(1)
  }, 60_000)
})
