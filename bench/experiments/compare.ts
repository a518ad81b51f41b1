/**
 * A small A/B harness for tuning experiments: starts the named servers (pinned like the
 * bench), interleaves rounds of one request type, prints per-server medians and ratios to the
 * first server. Used for the numbers in bench/PROFILE.md.
 *
 * Usage: tsx bench/experiments/compare.ts <set> [rounds] [seconds]
 *   set s1-layers   raw node:http and the S1 variants of s1-variants.ts, and the gateway
 *   set s1-gateway  the gateway against bare HttpApi variants and itself without its middleware
 *   set s1-gc       the gateway with larger young-generation semi-spaces (fewer scavenges)
 *   set s1-floor    raw node:http and a bare HttpServer.serve (s1-floor.ts), and the gateway
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "../lib/bundle.js"
import { benchFixture, LOOKUP_MS } from "../lib/fixture.js"
import { startFlags } from "../lib/startFlags.js"
import { type Measurement, median, runAutocannon } from "../lib/load.js"
import { killAllSync, pinSelf, type Server, startServer, stopAll } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [set = "s1-layers", roundsArg = "5", secondsArg = "3"] = process.argv.slice(2)
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const tmp = mkdtempSync(join(tmpdir(), "gateway-compare-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
const fixture = join(tmp, "fixture.json")
writeFileSync(fixture, JSON.stringify(benchFixture()))

interface Candidate { readonly name: string; readonly nodeArgs: ReadonlyArray<string>; readonly env?: Record<string, string> }
const tsx = (file: string, env: Record<string, string> = {}, name = file): Candidate => ({ name, nodeArgs: ["--import", "tsx", file], env })
const gateway = (env: Record<string, string> = {}, name = "gateway"): Candidate =>
  tsx("bench/servers/gateway.ts", { BENCH_WORKSPACE: "memory", BENCH_FIXTURE: fixture, BENCH_LOOKUP_MS: String(LOOKUP_MS), ...env }, name)
const variant = (v: string) => tsx("bench/experiments/s1-variants.ts", { VARIANT: v }, v)

const sets: Record<string, { readonly path: string; readonly connections: number; readonly candidates: ReadonlyArray<Candidate> }> = {
  "s1-layers": {
    path: "/v1/health",
    connections: 10,
    candidates: [
      tsx("bench/peers/raw.ts", { BENCH_FIXTURE: fixture }, "raw node:http"),
      variant("effect-app"),
      variant("effect-router"),
      variant("httpapi"),
      variant("httpapi-traced"),
      gateway()
    ]
  },
  "s1-gateway": {
    path: "/v1/health",
    connections: 10,
    candidates: [
      tsx("bench/peers/raw.ts", { BENCH_FIXTURE: fixture }, "raw node:http"),
      variant("httpapi"),
      variant("httpapi-response"),
      tsx("bench/experiments/s1-variants.ts", { VARIANT: "gateway-no-middleware", BENCH_FIXTURE: fixture }, "gateway-no-middleware"),
      gateway()
    ]
  },
  "s1-floor": {
    path: "/v1/health",
    connections: 10,
    candidates: [
      tsx("bench/experiments/s1-floor.ts", { VARIANT: "raw" }, "raw node:http (s1-floor.ts)"),
      tsx("bench/experiments/s1-floor.ts", { VARIANT: "effect" }, "HttpServer.serve (s1-floor.ts)"),
      gateway()
    ]
  },
  "s1-gc": {
    path: "/v1/health",
    connections: 10,
    candidates: [
      tsx("bench/peers/raw.ts", { BENCH_FIXTURE: fixture }, "raw node:http"),
      gateway(),
      { ...gateway({}, "gateway --max-semi-space-size=32"), nodeArgs: ["--max-semi-space-size=32", "--import", "tsx", "bench/servers/gateway.ts"] },
      { ...gateway({}, "gateway --max-semi-space-size=64"), nodeArgs: ["--max-semi-space-size=64", "--import", "tsx", "bench/servers/gateway.ts"] }
    ]
  }
}

const chosen = sets[set]
if (chosen === undefined) throw new Error(`unknown set ${set}; one of ${Object.keys(sets).join(", ")}`)

const main = async () => {
  pinSelf()
  let port = firstBenchPort()
  const servers: Array<Server> = []
  // The gateway as npm start runs it (bundle, start flags), unless COMPARE_TSX=1.
  const gatewayBundle = process.env.COMPARE_TSX === "1"
    ? undefined
    : [...startFlags(ROOT), await bundle(join(ROOT, "bench/servers/gateway.ts"), join(ROOT, "bench/.build/compare"), "gateway")]
  for (const c of chosen.candidates) {
    const nodeArgs = gatewayBundle !== undefined && c.nodeArgs.join(" ") === "--import tsx bench/servers/gateway.ts" ? gatewayBundle : c.nodeArgs
    servers.push(await startServer({ name: c.name, port: port++, nodeArgs, env: c.env ?? {}, cwd: ROOT }))
  }
  const results = new Map<string, Array<Measurement>>(servers.map((s) => [s.name, []]))
  const load = (s: Server, durationS: number) =>
    runAutocannon({ url: `http://127.0.0.1:${s.port}${chosen.path}`, connections: chosen.connections, durationS, pid: s.pid })
  for (const s of servers) await load(s, 2)
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + r) % servers.length]!
      const m = await load(s, seconds)
      if (m.failures.length > 0) throw new Error(`${s.name}: ${m.failures.join("; ")}`)
      results.get(s.name)!.push(m)
    }
  }
  await stopAll()
  const first = results.get(servers[0]!.name)!
  console.log(`${set}: ${rounds} rounds of ${seconds} s, ${chosen.connections} connections, ${chosen.path}`)
  console.log("server".padEnd(28), "req/s".padStart(8), "ratio".padStart(7), "p50 ms".padStart(8), "p99 ms".padStart(8), "CPU us/req".padStart(11), "CPU ratio".padStart(10), "CPU share".padStart(10))
  for (const [name, ms] of results) {
    const rps = median(ms.map((m) => m.rps))
    const ratio = median(ms.map((m, i) => m.rps / first[i]!.rps))
    const cpu = median(ms.map((m) => m.cpuUsPerReq))
    const cpuRatio = median(ms.map((m, i) => m.cpuUsPerReq / first[i]!.cpuUsPerReq))
    console.log(
      name.padEnd(28),
      rps.toFixed(0).padStart(8),
      ratio.toFixed(2).padStart(7),
      median(ms.map((m) => m.p50)).toFixed(2).padStart(8),
      median(ms.map((m) => m.p99)).toFixed(2).padStart(8),
      cpu.toFixed(1).padStart(11),
      cpuRatio.toFixed(2).padStart(10),
      median(ms.map((m) => m.cpuShare)).toFixed(2).padStart(10)
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
