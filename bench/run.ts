/**
 * `npm run bench`: the gateway against raw node:http, Fastify and NestJS (bench/peers) on this
 * machine, in one run, scenarios S1-S6, and bench/RESULTS.md from it. The gateway is
 * the product as shipped: dist/main.js under npm start's node flags, default settings (defineServers).
 *
 * Every server is a child process pinned to core 1 (`taskset -c 1`); this process, the load
 * generator, pins itself to core 0. Per scenario each server is warmed up, then measured in
 * rounds that interleave the servers (A B C D, A B C D, ...); ratios are medians of per-round
 * ratios. Every counted response must be a 2xx: autocannon's non2xx, errors and timeouts must
 * be 0, and each download must be a 200 of exactly the document's size.
 *
 * S7 is the scaling sweep: one list at growing sizes of what is behind it, with the growth
 * exponent between sizes (cost ~ n^k).
 *
 * S8 is the whole under load (bench/lib/wholeLoad.ts): the built gateway during uploads,
 * event streams, abandoned requests and health checks at once; peak RSS, 5xx, health's p99. Run
 * alone (`BENCH_ONLY=S8 npm run bench`) it rewrites only its own section of RESULTS.md.
 *
 * Settings: BENCH_WARMUP_S (3), BENCH_ROUND_S (5), BENCH_ROUNDS (3), BENCH_ONLY (S1,...,S8),
 * BENCH_RESULTS (bench/RESULTS.md; "-" writes none), BENCH_DEADLINE_S (900).
 */
import { execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { bundle } from "./lib/bundle.js"
import { startSlowUpstream } from "./lib/upstream.js"
import { cleanBenchDb } from "./lib/benchDb.js"
import { startFlags } from "./lib/startFlags.js"
import {
  BENCH_ENTITY_ID,
  BENCH_TASK_ID,
  benchFixture,
  EVENT_COUNT,
  ingestBody,
  LOOKUP_MS,
  MiB,
  SWEEP_DOCUMENTS_PER_TASK,
  SWEEP_EVENTS_PER_TASK,
  SWEEP_TASKS_PER_ENTITY,
  sweepDocumentTaskId,
  sweepEntityId,
  sweepEventTaskId,
  sweepFixture,
  uploadBody
} from "./lib/fixture.js"
import { type Measurement, median, runAutocannon, runDownloads } from "./lib/load.js"
import { postOversized } from "./lib/overLimit.js"
import {
  coreBusy,
  coreTicks,
  cpuModel,
  cpuMs,
  isAlive,
  killAllSync,
  loadAverage,
  memory,
  pinSelf,
  sampleRss,
  type Server,
  startServer,
  stopAll,
  stopServer
} from "./lib/proc.js"
import { medianRow, renderResults, type Row, type ServerMedians } from "./lib/report.js"
import { renderS8, runS8, S8, sectionS8, spliceS8 } from "./lib/wholeLoad.js"
import { handSections, withHandSections } from "./lib/handSections.js"
import { countWholeTimeline } from "./lib/timeline.js"
import { firstBenchPort } from "./lib/ports.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const num = (name: string, fallback: number) => {
  const v = process.env[name]
  return v === undefined || v === "" ? fallback : Number(v)
}
const ALL_SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"]
const settings = {
  warmupS: num("BENCH_WARMUP_S", 3),
  roundS: num("BENCH_ROUND_S", 5),
  rounds: num("BENCH_ROUNDS", 3),
  only: new Set((process.env.BENCH_ONLY || ALL_SCENARIOS.join(",")).split(",").map((s) => s.trim().toUpperCase()).filter((s) => s !== "")),
  results: process.env.BENCH_RESULTS ?? join(ROOT, "bench/RESULTS.md"),
  deadlineS: num("BENCH_DEADLINE_S", 900),
  /** Idle time on the server core before each measurement (the previous server's leftovers). */
  settleMs: num("BENCH_SETTLE_MS", 500)
}

const unknownScenarios = [...settings.only].filter((s) => !ALL_SCENARIOS.includes(s))
if (unknownScenarios.length > 0 || settings.only.size === 0) {
  console.error(`BENCH_ONLY: unknown scenario(s) ${unknownScenarios.join(", ") || "(none given)"}; expected some of ${ALL_SCENARIOS.join(",")}`)
  process.exit(2)
}
/**
 * A partial run (some scenarios, S8 alone aside) would replace RESULTS.md's tables with its few
 * rows: it writes the file only when BENCH_RESULTS names one.
 */
const partial = ALL_SCENARIOS.some((s) => !settings.only.has(s)) && !(settings.only.size === 1 && settings.only.has("S8"))
if (partial && process.env.BENCH_RESULTS === undefined) settings.results = "-"

const DOC_BYTES = 256 * MiB
/** Request bodies above this answer 413 (the gateway and the peers); S3 and S5 bodies are below it. */
const MAX_BODY = 4 * MiB
const started = performance.now()
const log = (msg: string) => console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(3)} s] ${msg}`)

// ---------------------------------------------------------------------------------------------
// Clean-up: servers by pid, the temporary directory, always.

const tmp = mkdtempSync(join(tmpdir(), "gateway-bench-"))
let cleaned = false
const cleanupSync = () => {
  if (cleaned) return
  cleaned = true
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
}
process.on("exit", cleanupSync)
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`)
    cleanupSync()
    process.exit(130)
  })
}
const deadline = setTimeout(() => {
  log(`deadline of ${settings.deadlineS} s reached: stopping`)
  cleanupSync()
  process.exit(2)
}, settings.deadlineS * 1000)
deadline.unref()

// ---------------------------------------------------------------------------------------------
// The world: fixture, document file, databases.

const fixtureFile = join(tmp, "fixture.json")
const sweepFixtureFile = join(tmp, "sweep-fixture.json")
const docFile = join(tmp, "document-256MiB.bin")
const dbUrl = (name: string) => `file:${join(tmp, `${name}.db`)}`

const writeDocument = () => {
  const fd = openSync(docFile, "w")
  const block = randomBytes(16 * MiB)
  for (let i = 0; i < DOC_BYTES / block.length; i++) {
    block.writeUInt32LE(i, 0) // every block differs a little
    writeSync(fd, block)
  }
  closeSync(fd)
}

const prepareDb = async (name: string, withDocument: boolean, fixture = fixtureFile): Promise<string | null> => {
  const args = ["--import", "tsx", "bench/servers/prepare.ts", dbUrl(name), fixture, ...(withDocument ? [docFile] : [])]
  const out = await new Promise<string>((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    const child = execFileAsync(process.execPath, args, (code) => {
      if (code === 0) resolve(stdout)
      else reject(new Error(`prepare ${name} failed (${code}):\n${stderr}`))
    })
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString()))
  })
  const last = out.trim().split("\n").at(-1) ?? "{}"
  return (JSON.parse(last) as { documentId: string | null }).documentId
}

const execFileAsync = (file: string, args: ReadonlyArray<string>, onExit: (code: number | null) => void) => {
  const child = spawn(file, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  child.on("close", onExit) // after its output is read, not just after it exited
  return child
}

const cleanDb = (name: string) => cleanBenchDb(dbUrl(name))

// ---------------------------------------------------------------------------------------------
// Servers.

interface Spec {
  readonly key: string
  readonly label: string
  readonly nodeArgs: ReadonlyArray<string>
  readonly env: Record<string, string>
  /** The database it writes to (S3, S5), cleaned between rounds. */
  readonly db?: string
}

let nextPort = firstBenchPort()
const servers = new Map<string, Server>()
const specs = new Map<string, Spec>()

const peerEnv = (db: string | undefined, docId: string): Record<string, string> => ({
  BENCH_FIXTURE: fixtureFile,
  ...(db !== undefined ? { BENCH_DB: dbUrl(db) } : {}),
  BENCH_DOC_FILE: docFile,
  BENCH_DOC_ID: docId,
  BENCH_LOOKUP_MS: String(LOOKUP_MS),
  BENCH_MAX_BODY: String(MAX_BODY)
})

/**
 * The gateway is measured as `npm start` runs it: the build in dist/ (BENCH_GATEWAY_DIST: another
 * build directory, e.g. `node scripts/build.mjs bench/.build/before` for a before/after) under the
 * node flags of the start script, default settings (request log, metrics, the admin listener on
 * a free port), its own embedded SQLite database prepared by bench/servers/prepare.ts. One setting
 * differs from the default: SVC_MAX_BODY_BYTES is the 4 MiB the peers get (S3's over-limit check).
 * S2's gateway reads its workspace over HTTP (SVC_WORKSPACE_URL): the workspace service (`npm run
 * workspace`) behind bench/servers/slowUpstream.ts, which holds every next-step lookup LOOKUP_MS.
 */
/**
 * BENCH_BEFORE_DIST: a second build (e.g. of the commit before a change) measured beside the
 * gateway in S1's and S2's rounds, for a before/after in one session.
 */
const beforeDist = process.env.BENCH_BEFORE_DIST || undefined
const gatewayEnv = (extra: Record<string, string>): Record<string, string> => ({
  HOST: "127.0.0.1",
  SVC_ADMIN_PORT: "0",
  SVC_MAX_BODY_BYTES: String(MAX_BODY),
  ...extra
})
const defineServers = (docId: string, gatewayNode: ReadonlyArray<string>, upstreamUrl: string): ReadonlyArray<Spec> => [
  {
    key: "gateway",
    label: "gateway (npm start)",
    nodeArgs: gatewayNode,
    env: gatewayEnv({ SVC_DATABASE_URL: dbUrl("gateway") }),
    db: "gateway"
  },
  ...(beforeDist === undefined ? [] : [{
    key: "gateway-before",
    label: `gateway (npm start, build ${beforeDist})`,
    nodeArgs: [...startFlags(ROOT), join(ROOT, beforeDist, "main.js")],
    env: gatewayEnv({ SVC_DATABASE_URL: dbUrl("gateway") })
  }]),
  {
    key: "gateway-s2",
    label: `gateway (npm start, SVC_WORKSPACE_URL: workspace service, ${LOOKUP_MS} ms lookups)`,
    nodeArgs: gatewayNode,
    env: gatewayEnv({ SVC_WORKSPACE_URL: upstreamUrl, SVC_TENANT_SLUG: "acme" })
  },
  ...(beforeDist === undefined ? [] : [{
    key: "gateway-s2-before",
    label: `gateway (npm start, build ${beforeDist}, SVC_WORKSPACE_URL: workspace service, ${LOOKUP_MS} ms lookups)`,
    nodeArgs: [...startFlags(ROOT), join(ROOT, beforeDist, "main.js")],
    env: gatewayEnv({ SVC_WORKSPACE_URL: upstreamUrl, SVC_TENANT_SLUG: "acme" })
  }]),
  {
    key: "gateway-sweep",
    label: "gateway (npm start, sweep data)",
    nodeArgs: gatewayNode,
    env: gatewayEnv({ SVC_DATABASE_URL: dbUrl("sweep") })
  },
  { key: "raw", label: "raw node:http", nodeArgs: ["--import", "tsx", "bench/peers/raw.ts"], env: peerEnv("raw", docId), db: "raw" },
  // S2's peers as gateways in front of the same workspace service: one board call each list.
  {
    key: "raw-s2",
    label: "raw node:http over the same workspace service",
    nodeArgs: ["--import", "tsx", "bench/peers/raw.ts"],
    env: { ...peerEnv(undefined, docId), BENCH_UPSTREAM_URL: upstreamUrl }
  },
  {
    key: "nest-s2",
    label: "NestJS (Express) over the same workspace service",
    nodeArgs: ["--import", "tsx", "bench/peers/nest.ts"],
    env: { ...peerEnv(undefined, docId), BENCH_UPSTREAM_URL: upstreamUrl }
  },
  { key: "fastify", label: "Fastify", nodeArgs: ["--import", "tsx", "bench/peers/fastify.ts"], env: peerEnv(undefined, docId) },
  { key: "nest", label: "NestJS (Express)", nodeArgs: ["--import", "tsx", "bench/peers/nest.ts"], env: peerEnv("nest", docId), db: "nest" }
]

/**
 * S2's upstream, not measured: the workspace service (an esbuild bundle of src/workspace/server/main.ts,
 * as the gateway's build is one) on its own prepared database, and the proxy that delays its
 * next-step lookups; both pinned to the load generator's core, away from the measured server.
 */
const upstreamPids: Array<number> = []
const startUpstream = async (): Promise<string> => {
  const { workspace, proxy, url } = await startSlowUpstream(() => nextPort++, dbUrl("upstream"))
  upstreamPids.push(workspace.pid, proxy.pid)
  log(`S2 upstream: workspace service pid ${workspace.pid}, lookup delay proxy pid ${proxy.pid}`)
  return url
}

const server = (key: string): Server => {
  const s = servers.get(key)
  if (s === undefined) throw new Error(`server ${key} is not running`)
  return s
}
const url = (key: string, path: string) => `http://127.0.0.1:${server(key).port}${path}`

// ---------------------------------------------------------------------------------------------
// Interleaved measurement.

interface Load {
  readonly run: (key: string, durationS: number) => Promise<Measurement>
  /** After every warm-up and round (e.g. clean the database). */
  readonly after?: (key: string) => Promise<void>
}

type Rounds = Map<string, Array<Measurement>>

const failures: Array<string> = []

const interleave = async (scenario: string, keys: ReadonlyArray<string>, load: Load, roundS = settings.roundS): Promise<Rounds> => {
  const out: Rounds = new Map(keys.map((k) => [k, []]))
  // BENCH_WARMUP_S=0: no warm-up (a zero-second load completes nothing, e.g. no 256 MiB download).
  for (const key of settings.warmupS > 0 ? keys : []) {
    const m = await load.run(key, settings.warmupS)
    assertAlive(scenario, [key])
    if (m.failures.length > 0) failures.push(`${scenario} warm-up ${key}: ${m.failures.join("; ")}`)
    await load.after?.(key)
  }
  for (let r = 0; r < settings.rounds; r++) {
    assertAlive(scenario, keys)
    // Rotate the order each round so that no server always runs first or last, and reverse it
    // every other round so that no server always follows the same one: whatever the previous
    // server leaves running on the core (its GC, closing 10 connections) lands on the next one.
    const rotated = keys.map((_, i) => keys[(i + r) % keys.length]!)
    const order = r % 2 === 1 ? rotated.reverse() : rotated
    for (const key of order) {
      await sleep(settings.settleMs)
      const m = await load.run(key, roundS)
      assertAlive(scenario, [key])
      if (m.failures.length > 0) failures.push(`${scenario} round ${r + 1} ${key}: ${m.failures.join("; ")}`)
      out.get(key)!.push(m)
      await load.after?.(key)
    }
    log(`${scenario} round ${r + 1}/${settings.rounds}: ${order.map((k) => `${k} ${summary(out.get(k)!.at(-1)!)}`).join(", ")}`)
  }
  return out
}

/** A server that died fails the run, with what it printed last. */
const assertAlive = (scenario: string, keys: ReadonlyArray<string>) => {
  for (const key of keys) {
    const s = server(key)
    if (!isAlive(s)) {
      throw new Error(`${scenario}: ${key} (pid ${s.pid}) exited (${s.child.exitCode ?? s.child.signalCode}); its last output:\n${s.output().slice(-3000)}`)
    }
  }
}

const summary = (m: Measurement) => `${m.rps.toFixed(0)}/s p50 ${m.p50.toFixed(1)} ms`

/** Median over rounds of gateway/peer, each round's pair measured back to back. */
const pairedRatio = (rounds: Rounds, a: string, b: string, metric: (m: Measurement) => number): number => {
  const xs = rounds.get(a)!
  const ys = rounds.get(b)!
  return median(xs.map((x, i) => metric(x) / metric(ys[i]!)))
}
const med = (rounds: Rounds, key: string, metric: (m: Measurement) => number) => median(rounds.get(key)!.map(metric))

const rows: Array<Row> = []
const medians: Array<ServerMedians> = []
const checks: Array<string> = []

const compare = (
  scenario: string,
  metric: string,
  rounds: Rounds,
  gateway: string,
  peer: string,
  value: (m: Measurement) => number,
  target?: { readonly op: ">=" | "<="; readonly x: number }
) => {
  const ratio = pairedRatio(rounds, gateway, peer, value)
  rows.push({
    scenario,
    metric,
    peer: specs.get(peer)!.label + (gateway !== primaryOf(scenario) ? ` (${specs.get(gateway)!.label})` : ""),
    ratio,
    target: target === undefined ? "" : `${target.op} ${target.x}x`,
    met: target === undefined ? undefined : target.op === ">=" ? ratio >= target.x : ratio <= target.x
  })
}
/**
 * The same comparison from the servers' CPU time per request (peer / gateway): the capacity
 * ratio if each had a core to itself. It moves much less than requests/s when other work on the
 * machine takes CPU from the server core, so it is a cross-check of the requests/s ratio.
 */
const compareCpu = (scenario: string, rounds: Rounds, gateway: string, peer: string) => {
  rows.push({
    scenario,
    metric: "capacity from CPU time per request (cross-check)",
    peer: specs.get(peer)!.label + (gateway !== primaryOf(scenario) ? ` (${specs.get(gateway)!.label})` : ""),
    ratio: pairedRatio(rounds, peer, gateway, (m) => m.cpuUsPerReq),
    target: "",
    met: undefined
  })
}
const primaryOf = (scenario: string) => (scenario.startsWith("S2") ? "gateway-s2" : "gateway")

const addMedians = (scenario: string, rounds: Rounds, value: (m: Measurement) => string) => {
  for (const [key, ms] of rounds) medians.push(medianRow(scenario, specs.get(key)!.label, value(medianOf(ms)), ms, median))
}
/** A synthetic measurement of per-field medians, for display. */
const medianOf = (ms: ReadonlyArray<Measurement>): Measurement => ({
  rps: median(ms.map((m) => m.rps)),
  bytesPerSec: median(ms.map((m) => m.bytesPerSec)),
  p50: median(ms.map((m) => m.p50)),
  p99: median(ms.map((m) => m.p99)),
  completed: median(ms.map((m) => m.completed)),
  cpuUsPerReq: median(ms.map((m) => m.cpuUsPerReq)),
  cpuShare: median(ms.map((m) => m.cpuShare)),
  failures: []
})

/** One request to every server before a scenario counts: same status and an equivalent body. */
const probe = async (scenario: string, keys: ReadonlyArray<string>, path: string, init: RequestInit, check: (status: number, body: any) => string | undefined) => {
  const bodies: Array<string> = []
  for (const key of keys) {
    const res = await fetch(url(key, path), init)
    const text = await res.text()
    let body: unknown = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON
    }
    const problem = check(res.status, body)
    if (problem !== undefined) failures.push(`${scenario} probe ${key}: ${problem}`)
    bodies.push(JSON.stringify(body))
  }
  return bodies
}

// ---------------------------------------------------------------------------------------------
// Scenarios.

const PEERS = ["raw", "fastify", "nest"] as const
/**
 * S2's peers over the workspace service the gateway reads (bench/peers/common.ts with
 * BENCH_UPSTREAM_URL): the like-for-like comparison, each list one board call through the same
 * delay proxy, so the upstream's CPU on core 0 is every server's, not the gateway's alone.
 */
const S2_UPSTREAM_PEERS = ["raw-s2", "nest-s2"] as const
const get = (path: string, connections: number): Load => ({
  run: (key, durationS) => runAutocannon({ url: url(key, path), connections, durationS, pid: server(key).pid })
})

const s1 = async () => {
  const keys = ["gateway", ...(beforeDist === undefined ? [] : ["gateway-before"]), ...PEERS]
  const bodies = await probe("S1", keys, "/v1/health", {}, (status, body) =>
    status === 200 && JSON.stringify(body) === "{\"status\":\"ok\"}" ? undefined : `${status} ${JSON.stringify(body)}`)
  if (new Set(bodies).size !== 1) failures.push(`S1: bodies differ: ${bodies.join(" / ")}`)
  const rounds = await interleave("S1", keys, get("/v1/health", 10))
  const rps = (m: Measurement) => m.rps
  compare("S1 GET /v1/health", "requests/s", rounds, "gateway", "raw", rps, { op: ">=", x: 0.35 })
  compare("S1 GET /v1/health", "requests/s", rounds, "gateway", "nest", rps, { op: ">=", x: 2.5 })
  compare("S1 GET /v1/health", "requests/s", rounds, "gateway", "fastify", rps)
  compare("S1 GET /v1/health", "p99 latency", rounds, "gateway", "raw", (m) => m.p99, { op: "<=", x: 3 })
  compareCpu("S1 GET /v1/health", rounds, "gateway", "raw")
  compareCpu("S1 GET /v1/health", rounds, "gateway", "nest")
  if (beforeDist !== undefined) {
    compare("S1 GET /v1/health", "requests/s", rounds, "gateway-before", "nest", rps)
    compareCpu("S1 GET /v1/health", rounds, "gateway-before", "nest")
    compare("S1 GET /v1/health", "requests/s", rounds, "gateway", "gateway-before", rps)
    compareCpu("S1 GET /v1/health", rounds, "gateway", "gateway-before")
  }
  addMedians("S1 (10 connections)", rounds, (m) => `${m.rps.toFixed(0)} req/s`)
}

const s2 = async () => {
  const keys = ["gateway-s2", ...(beforeDist === undefined ? [] : ["gateway-s2-before"]), ...PEERS, ...S2_UPSTREAM_PEERS]
  const path = `/v1/entities/${BENCH_ENTITY_ID}/tasks`
  const bodies = await probe("S2", keys, path, {}, (status, body) =>
    status === 200 && Array.isArray(body) && body.length === 50 && body.every((t: any) => typeof t.awaiting === "string")
      ? undefined
      : `${status} ${JSON.stringify(body).slice(0, 200)}`)
  const canonical = (s: string) => JSON.stringify((JSON.parse(s) as Array<Record<string, unknown>>).map((t) => Object.keys(t).sort().map((k) => [k, t[k]])))
  if (new Set(bodies.map(canonical)).size !== 1) failures.push("S2: the task lists differ between servers")

  const latency = await interleave("S2 latency", keys, get(path, 1), Math.max(2, Math.round(settings.roundS * 0.6)))
  const p50 = med(latency, "gateway-s2", (m) => m.p50)
  rows.push({
    scenario: "S2 GET /v1/entities/:id/tasks (50 tasks)",
    metric: "p50 latency, 1 connection",
    peer: `one ${LOOKUP_MS} ms lookup`,
    ratio: p50 / LOOKUP_MS,
    target: "<= 2x",
    met: p50 / LOOKUP_MS <= 2
  })
  const latencyRaw = med(latency, "raw", (m) => m.p50)
  rows.push({
    scenario: "S2 GET /v1/entities/:id/tasks (50 tasks)",
    metric: "p50 latency, 1 connection",
    peer: `one ${LOOKUP_MS} ms lookup (raw node:http, for reference)`,
    ratio: latencyRaw / LOOKUP_MS,
    target: "",
    met: undefined
  })
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "p50 latency, 1 connection", latency, "gateway-s2", "nest-s2", (m) => m.p50)
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "p50 latency, 1 connection", latency, "gateway-s2", "raw-s2", (m) => m.p50)
  addMedians("S2 latency (1 connection)", latency, (m) => `${m.rps.toFixed(0)} req/s`)

  const rounds = await interleave("S2", keys, withUpstreamCpu(get(path, 10)))
  const rps = (m: Measurement) => m.rps
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "raw", rps, { op: ">=", x: 0.6 })
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "fastify", rps)
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "nest", rps)
  compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2", "raw")
  compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2", "nest")
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "nest-s2", rps)
  compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "raw-s2", rps)
  compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2", "nest-s2")
  compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2", "raw-s2")
  if (beforeDist !== undefined) {
    compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2-before", "raw", rps)
    compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2-before", "raw")
    compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "requests/s, 10 connections", rounds, "gateway-s2", "gateway-s2-before", rps)
    compareCpu("S2 GET /v1/entities/:id/tasks (50 tasks)", rounds, "gateway-s2", "gateway-s2-before")
    compare("S2 GET /v1/entities/:id/tasks (50 tasks)", "p50 latency, 1 connection", latency, "gateway-s2", "gateway-s2-before", (m) => m.p50)
  }
  addMedians("S2 (10 connections)", rounds, (m) => `${m.rps.toFixed(0)} req/s`)
  // The last entries are the rounds' (the warm-up came first).
  const split = (key: string) => {
    const measured = (upstreamRounds.get(key) ?? []).slice(-settings.rounds)
    if (measured.length === 0) return undefined
    const m = (f: (r: UpstreamRound) => number) => median(measured.map(f))
    return `the workspace service and the delay proxy spent ${m((r) => r.upstreamUs).toFixed(0)} us of CPU and the load generator ` +
      `${m((r) => r.loadUs).toFixed(0)} us, all on core 0 (busy ${m((r) => r.core0).toFixed(2)}); the server ` +
      `${m((r) => r.gatewayUs).toFixed(0)} us on core 1 (busy ${m((r) => r.core1).toFixed(2)})`
  }
  const gatewaySplit = split("gateway-s2")
  if (gatewaySplit !== undefined) {
    const peerSplits = S2_UPSTREAM_PEERS.flatMap((key) => {
      const text = split(key)
      return text === undefined ? [] : [`${specs.get(key)!.label}: ${text}`]
    })
    checks.push(
      `S2 at 10 connections, what bounds the lists (medians of ${settings.rounds} rounds), per list: gateway: ${gatewaySplit}. ` +
        peerSplits.map((t) => `${t}. `).join("") +
        `The other peers look their lists up in-process (a ${LOOKUP_MS} ms timer), so core 0 carries only their load generator.`
    )
  }
}

interface UpstreamRound { readonly upstreamUs: number; readonly loadUs: number; readonly gatewayUs: number; readonly core0: number; readonly core1: number }
const upstreamRounds = new Map<string, Array<UpstreamRound>>()
/**
 * S2's 10-connection load, with the CPU the gateway's upstream (the workspace service and the
 * delay proxy, on the load generator's core) and the load generator spent per list, and each
 * core's busy share: what bounds the gateway's lists/s where its own core is not full.
 */
const withUpstreamCpu = (load: Load): Load => ({
  run: async (key, durationS) => {
    if ((key !== "gateway-s2" && !(S2_UPSTREAM_PEERS as ReadonlyArray<string>).includes(key)) || upstreamPids.length === 0) {
      return load.run(key, durationS)
    }
    const upstream = () => upstreamPids.reduce((sum, pid) => sum + cpuMs(pid), 0)
    const [u0, l0, t0] = [upstream(), cpuMs(process.pid), coreTicks()]
    const m = await load.run(key, durationS)
    const busy = coreBusy(t0, coreTicks())
    const perList = (ms: number) => (ms * 1000) / Math.max(1, m.completed)
    if (!upstreamRounds.has(key)) upstreamRounds.set(key, [])
    upstreamRounds.get(key)!.push({
      upstreamUs: perList(upstream() - u0),
      loadUs: perList(cpuMs(process.pid) - l0),
      gatewayUs: m.cpuUsPerReq,
      core0: busy[0] ?? NaN,
      core1: busy[1] ?? NaN
    })
    return m
  }
})

/**
 * S3-S5 against raw node:http (the target) and NestJS (what the original implementation used).
 * Fastify is left out of them to keep the whole run under 10 minutes.
 */
const DB_KEYS = ["gateway", "raw", "nest"]
const S4_KEYS = DB_KEYS

const s3 = async (upload: string) => {
  const path = `/v1/tasks/${BENCH_TASK_ID}/files`
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: upload }
  await probe("S3", DB_KEYS, path, init, (status, body) =>
    status === 201 && body?.sizeBytes === MiB && typeof body?.documentRef === "string" && body?.contentType === "application/octet-stream"
      ? undefined
      : `${status} ${JSON.stringify(body).slice(0, 200)}`)
  for (const key of DB_KEYS) await cleanDb(specs.get(key)!.db!)
  const rounds = await interleave("S3", DB_KEYS, {
    run: (key, durationS) =>
      runAutocannon({ url: url(key, path), method: "POST", body: upload, headers: { "content-type": "application/json" }, connections: 4, durationS, pid: server(key).pid }),
    after: (key) => cleanDb(specs.get(key)!.db!)
  })
  const mbps = (m: Measurement) => m.rps // 1 MiB per request
  compare("S3 upload 1 MiB (base64 JSON)", "MB/s", rounds, "gateway", "raw", mbps, { op: ">=", x: 0.7 })
  compare("S3 upload 1 MiB (base64 JSON)", "MB/s", rounds, "gateway", "nest", mbps)
  compareCpu("S3 upload 1 MiB (base64 JSON)", rounds, "gateway", "raw")
  compareCpu("S3 upload 1 MiB (base64 JSON)", rounds, "gateway", "nest")
  addMedians("S3 (4 connections)", rounds, (m) => `${(m.rps * MiB / 1e6).toFixed(0)} MB/s`)

  // Above the limit: 413, and the server does not hold the bodies.
  const gw = server("gateway")
  const before = memory(gw.pid).rss
  const sampler = sampleRss(gw.pid)
  const statuses: Array<number> = []
  for (let i = 0; i < 8; i++) statuses.push(await postOversized(gw.port, path, 64 * MiB, false))
  for (let i = 0; i < 8; i++) statuses.push(await postOversized(gw.port, path, 64 * MiB, true))
  await sleep(200)
  const peak = sampler.stop()
  const growth = (peak - before) / MiB
  const all413 = statuses.every((s) => s === 413)
  const flat = growth <= 16
  rows.push({
    scenario: "S3 upload above the limit",
    metric: `16 bodies of 64 MiB (limit ${MAX_BODY / MiB} MiB)`,
    peer: "target",
    ratio: NaN,
    target: "413, memory flat",
    met: all413 && flat,
    note: `${statuses.filter((s) => s === 413).length}/16 saw the 413${
      statuses.some((s) => s === 0) ? `, ${statuses.filter((s) => s === 0).length} reset before the answer could be read` : ""
    }; RSS +${growth.toFixed(1)} MB`
  })
  checks.push(
    `S3 over the limit: 8 bodies of 64 MiB with Content-Length and 8 chunked to the gateway (limit ${MAX_BODY / MiB} MiB): ` +
      `statuses ${statuses.join(",")}; RSS ${(before / MiB).toFixed(0)} MB before, peak ${(peak / MiB).toFixed(0)} MB (+${growth.toFixed(1)} MB; flat means <= 16 MB while 1 GiB was offered).`
  )
}

const s4 = async (docId: string) => {
  const path = `/v1/tasks/${BENCH_TASK_ID}/files/${docId}/download`
  const baseline = new Map(S4_KEYS.map((k) => [k, memory(server(k).pid).rss]))
  const peaks = new Map<string, number>()
  const rounds = await interleave("S4", S4_KEYS, {
    run: async (key, durationS) => {
      const sampler = sampleRss(server(key).pid)
      const m = await runDownloads({ url: url(key, path), connections: 2, durationS, expectedBytes: DOC_BYTES, pid: server(key).pid })
      peaks.set(key, Math.max(peaks.get(key) ?? 0, sampler.stop()))
      return m
    }
  })
  const mbps = (m: Measurement) => m.bytesPerSec
  compare("S4 download 256 MiB", "MB/s", rounds, "gateway", "raw", mbps, { op: ">=", x: 0.9 })
  compare("S4 download 256 MiB", "MB/s", rounds, "gateway", "nest", mbps)
  compareCpu("S4 download 256 MiB", rounds, "gateway", "raw")
  addMedians("S4 (2 connections)", rounds, (m) => `${(m.bytesPerSec / 1e6).toFixed(0)} MB/s`)
  const growth = (key: string) => (peaks.get(key)! - baseline.get(key)!) / MiB
  rows.push({
    scenario: "S4 download 256 MiB",
    metric: "RSS growth during the downloads",
    peer: "target",
    ratio: NaN,
    target: "<= 50 MB",
    met: growth("gateway") <= 50,
    note: `+${growth("gateway").toFixed(1)} MB`
  })
  checks.push(
    `S4 RSS growth (peak while downloading minus RSS before S4): ${S4_KEYS.map((k) => `${specs.get(k)!.label} +${growth(k).toFixed(1)} MB`).join(", ")}.`
  )
}

const s5 = async (ingest: string) => {
  const path = `/v1/tasks/${BENCH_TASK_ID}/data/ingest`
  const init = { method: "POST", headers: { "content-type": "application/json" }, body: ingest }
  await probe("S5", DB_KEYS, path, init, (status, body) =>
    status === 201 && Array.isArray(body) && body.length === EVENT_COUNT && body.every((r: any) => r.status === "accepted")
      ? undefined
      : `${status} ${JSON.stringify(body).slice(0, 200)}`)
  for (const key of DB_KEYS) await cleanDb(specs.get(key)!.db!)
  const rounds = await interleave("S5", DB_KEYS, {
    run: (key, durationS) =>
      runAutocannon({ url: url(key, path), method: "POST", body: ingest, headers: { "content-type": "application/json" }, connections: 2, durationS, pid: server(key).pid }),
    after: (key) => cleanDb(specs.get(key)!.db!)
  })
  const rowsPerSec = (m: Measurement) => m.rps * EVENT_COUNT
  compare("S5 ingest 1,000 events of 2 KB", "rows/s", rounds, "gateway", "raw", rowsPerSec, { op: ">=", x: 0.7 })
  compare("S5 ingest 1,000 events of 2 KB", "rows/s", rounds, "gateway", "nest", rowsPerSec)
  compareCpu("S5 ingest 1,000 events of 2 KB", rounds, "gateway", "raw")
  compareCpu("S5 ingest 1,000 events of 2 KB", rounds, "gateway", "nest")
  addMedians("S5 (2 connections)", rounds, (m) => `${(m.rps * EVENT_COUNT).toFixed(0)} rows/s`)
}

/**
 * S7: the cost of one list as the rows behind it grow, on the embedded store (real SQL), one
 * connection. k is the growth exponent between consecutive sizes (CPU per request ~ n^k): about 1
 * for a list that answers every row, about 0 for one that answers a page. The task list answers
 * every task by the spec's definition (O(all rows) is its page); the default timeline answers every
 * event up to its budget (about SVC_EVENTS_PAGE_BYTES, 1 MiB: some 4,100 of the
 * sweep's events), then says where to read on, so its probe follows nextAfter to check that
 * every event is reached; the file list answers at most 20 documents (O(page)).
 */
const s7 = async () => {
  const key = "gateway-sweep"
  const cases: ReadonlyArray<{
    readonly what: string
    readonly sizes: ReadonlyArray<number>
    readonly unit: string
    readonly path: (n: number) => string
    /** The items behind the answer `body` (reading on from `path` where the answer says so). */
    readonly count: (body: any, path: string) => number | Promise<number>
    readonly expected: (n: number) => number
    readonly target: number
    readonly note: string
  }> = [
    {
      what: "task list (GET /v1/entities/:id/tasks)",
      sizes: SWEEP_TASKS_PER_ENTITY,
      unit: "tasks per entity",
      path: (n) => `/v1/entities/${sweepEntityId(n)}/tasks`,
      count: (body) => (Array.isArray(body) ? body.filter((t: any) => typeof t.awaiting === "string").length : -1),
      expected: (n) => n + (n === SWEEP_TASKS_PER_ENTITY[0] ? SWEEP_EVENTS_PER_TASK.length + SWEEP_DOCUMENTS_PER_TASK.length : 0),
      target: 1.1,
      note: "answers every task: linear is its page"
    },
    {
      what: "event timeline, default answer (GET /v1/tasks/:id/events)",
      sizes: SWEEP_EVENTS_PER_TASK,
      unit: "events per task",
      path: (n) => `/v1/tasks/${sweepEventTaskId(n)}/events`,
      count: (body, path) => countWholeTimeline(body, (after) => fetch(url(key, `${path}?after=${after}`))),
      expected: (n) => n,
      target: 1.1,
      note: "the default answer is every event up to its 1 MiB budget, then hasMore/nextAfter; the probe follows them"
    },
    {
      what: "file list (GET /v1/tasks/:id/files)",
      sizes: SWEEP_DOCUMENTS_PER_TASK,
      unit: "documents per task",
      path: (n) => `/v1/tasks/${sweepDocumentTaskId(n)}/files`,
      count: (body) => (Array.isArray(body) ? body.length : -1),
      expected: () => 20,
      target: 0.25,
      note: "answers the newest 20: O(page)"
    }
  ]
  const durationS = Math.max(2, Math.round(settings.roundS * 0.6))
  for (const c of cases) {
    const perSize: Array<{ n: number; cpu: number; p50: number; bytes: number }> = []
    for (const n of c.sizes) {
      const res = await fetch(url(key, c.path(n)))
      const text = await res.text()
      const got = res.status === 200 ? await c.count(JSON.parse(text), c.path(n)) : -1
      if (got !== c.expected(n)) failures.push(`S7 probe ${c.what} at ${n}: ${res.status}, ${got} items instead of ${c.expected(n)}`)
      const load = get(c.path(n), 1)
      if (settings.warmupS > 0) await load.run(key, settings.warmupS)
      const ms: Array<Measurement> = []
      for (let r = 0; r < settings.rounds; r++) {
        const m = await load.run(key, durationS)
        assertAlive("S7", [key])
        if (m.failures.length > 0) failures.push(`S7 ${c.what} at ${n}: ${m.failures.join("; ")}`)
        ms.push(m)
      }
      const row = { n, cpu: median(ms.map((m) => m.cpuUsPerReq)), p50: median(ms.map((m) => m.p50)), bytes: Buffer.byteLength(text) }
      perSize.push(row)
      medians.push({
        scenario: `S7 ${c.what}, ${n.toLocaleString("en-US")} ${c.unit} (1 connection)`,
        server: specs.get(key)!.label,
        value: `${(row.bytes / 1024).toFixed(0)} KiB answer`,
        p50: row.p50,
        p99: median(ms.map((m) => m.p99)),
        cpuUsPerReq: row.cpu,
        cpuShare: median(ms.map((m) => m.cpuShare)),
        rounds: ms.length
      })
      log(`S7 ${c.what} at ${n}: p50 ${row.p50.toFixed(2)} ms, CPU ${row.cpu.toFixed(0)} us/req, ${row.bytes} bytes`)
    }
    for (let i = 1; i < perSize.length; i++) {
      const a = perSize[i - 1]!
      const b = perSize[i]!
      const k = Math.log(b.cpu / a.cpu) / Math.log(b.n / a.n)
      rows.push({
        scenario: `S7 scaling: ${c.what}`,
        metric: `growth exponent k of CPU per request, ${a.n.toLocaleString("en-US")} -> ${b.n.toLocaleString("en-US")} ${c.unit}`,
        peer: `itself at ${a.n.toLocaleString("en-US")}`,
        ratio: k,
        shown: `k = ${k.toFixed(2)}`,
        target: `k <= ${c.target}`,
        met: k <= c.target,
        note: `${a.cpu.toFixed(0)} -> ${b.cpu.toFixed(0)} us/req, p50 ${a.p50.toFixed(2)} -> ${b.p50.toFixed(2)} ms; ${c.note}`
      })
    }
  }
}

/** npm's own entry script, to start `npm start` as a child of this process. */
const npmCli = (): string | undefined => {
  if (process.env.npm_execpath !== undefined && process.env.npm_execpath.endsWith(".js")) return process.env.npm_execpath
  try {
    return realpathSync(execFileSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).trim())
  } catch {
    return undefined
  }
}

/** The first child of `pid` (npm start execs node: its child is the server). */
const childOf = (pid: number): number | undefined => {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0]
    return first === undefined || first === "" ? undefined : Number(first)
  } catch {
    return undefined
  }
}

// S6: start to first healthy answer, and RSS after 1 s idle; one start to warm caches, then 3.
// The gateway as `npm start` runs it (the esbuild build in dist/, plain node), as `npm start`
// itself (npm, the staleness check, then the same process), and with tsx (`npm run dev`).
const s6 = async () => {
  const buildDir = join(ROOT, "bench/.build")
  const s6Dir = join(tmp, "s6")
  mkdirSync(s6Dir, { recursive: true })
  // The README's configuration: embedded workspace, admin listener on (a free port here).
  const mainEnv = { HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_DATABASE_URL: `file:${join(s6Dir, "main.db")}` }
  const candidates: Array<{ key: string; label: string; nodeArgs: ReadonlyArray<string>; env: Record<string, string>; viaNpm?: boolean }> = []
  let gatewayEntry = "src/main.ts"
  try {
    const probeServer = await startServer({ name: "main.ts", port: nextPort++, nodeArgs: ["--import", "tsx", "src/main.ts"], env: mainEnv, timeoutMs: 30_000 })
    await stopServer(probeServer)
    const { runBuild } = await import("../scripts/build.mjs")
    await runBuild(join(ROOT, "dist"))
    const flags = startFlags(ROOT)
    candidates.push({
      key: "main-dist",
      label: `gateway: node ${[...flags, "dist/main.js"].join(" ")} (what npm start runs)`,
      nodeArgs: [...flags, "dist/main.js"],
      env: mainEnv
    })
    const npm = npmCli()
    if (npm !== undefined) {
      candidates.push({ key: "npm-start", label: "gateway: npm start (npm, staleness check, then the same)", nodeArgs: [npm, "start"], env: mainEnv, viaNpm: true })
    } else {
      checks.push("S6: npm's entry script was not found; `npm start` itself was not measured.")
    }
    candidates.push({ key: "main-tsx", label: "gateway: tsx src/main.ts (npm run dev)", nodeArgs: ["--import", "tsx", "src/main.ts"], env: mainEnv })
  } catch (e) {
    gatewayEntry = "bench/servers/gateway.ts"
    // The error's first line, and the last lines of what the process wrote (why it stopped).
    const lines = String(e).split("\n").filter((l) => l.trim() !== "")
    checks.push(`S6: src/main.ts did not start (${[lines[0], ...lines.slice(1).slice(-3)].join(" / ")}); measured the bench entry bench/servers/gateway.ts (embedded store) instead.`)
    const benchEnv = { BENCH_WORKSPACE: "embedded", BENCH_DB: dbUrl("s6") }
    await prepareDb("s6", false)
    candidates.push({ key: "main-tsx", label: "gateway: tsx bench/servers/gateway.ts", nodeArgs: ["--import", "tsx", "bench/servers/gateway.ts"], env: benchEnv })
  }
  const gatewayEnv = candidates[0]!.env
  if (gatewayEntry !== "src/main.ts") {
    try {
      const bundled = await bundle(join(ROOT, gatewayEntry), join(buildDir, "gateway"), "main")
      candidates.push({ key: "main-dist", label: `gateway: node ${bundled.slice(ROOT.length)} (esbuild bundle of ${gatewayEntry})`, nodeArgs: [bundled], env: gatewayEnv })
    } catch (e) {
      checks.push(`S6: bundling ${gatewayEntry} failed: ${String(e).split("\n")[0]}`)
    }
  }
  const rawBundle = await bundle(join(ROOT, "bench/peers/raw.ts"), join(buildDir, "raw"), "raw")
  // The raw peer without a database: node:http and the fixture, nothing else loaded.
  const rawEnv = { BENCH_FIXTURE: fixtureFile }
  candidates.push({ key: "raw-tsx", label: "raw node:http: tsx", nodeArgs: ["--import", "tsx", "bench/peers/raw.ts"], env: rawEnv })
  candidates.push({ key: "raw-bundle", label: "raw node:http: bundle", nodeArgs: [rawBundle], env: rawEnv })
  // NestJS under tsx (its decorators and optional requires are not bundled): a reference, not a target.
  candidates.push({ key: "nest-tsx", label: "NestJS (Express): tsx", nodeArgs: ["--import", "tsx", "bench/peers/nest.ts"], env: rawEnv })

  const results = new Map<string, Array<{ startMs: number; rss: number }>>(candidates.map((c) => [c.key, []]))
  for (let round = 0; round < 4; round++) {
    for (const c of candidates) {
      const s = await startServer({ name: c.key, port: nextPort++, nodeArgs: c.nodeArgs, env: c.env, timeoutMs: 30_000, cwd: ROOT })
      await sleep(1000)
      // npm start: the server is npm's child (the script execs node); npm's own memory is not counted.
      const rss = memory(c.viaNpm === true ? childOf(s.pid) ?? s.pid : s.pid).rss
      await stopServer(s)
      if (round > 0) results.get(c.key)!.push({ startMs: s.startMs, rss })
    }
  }
  const m = (key: string, f: (x: { startMs: number; rss: number }) => number) => median(results.get(key)!.map(f))
  for (const c of candidates) {
    medians.push({
      scenario: "S6 idle process (3 starts)",
      server: c.label,
      value: `${(m(c.key, (x) => x.rss) / MiB).toFixed(1)} MB RSS, ${m(c.key, (x) => x.startMs).toFixed(0)} ms to healthy`,
      p50: NaN,
      p99: NaN,
      cpuUsPerReq: NaN,
      cpuShare: NaN,
      rounds: results.get(c.key)!.length
    })
  }
  for (const [key, rawKey] of [["main-dist", "raw-bundle"], ["npm-start", "raw-bundle"], ["main-tsx", "raw-tsx"]] as const) {
    if (!results.has(key)) continue
    const label = candidates.find((c) => c.key === key)!.label
    const rss = m(key, (x) => x.rss) / MiB
    const start = m(key, (x) => x.startMs)
    rows.push({
      scenario: "S6 idle process",
      metric: `RSS after start: ${label}`,
      peer: "80 MB",
      ratio: rss / 80,
      target: "<= 1x",
      met: rss <= 80,
      note: `${rss.toFixed(1)} MB; raw node:http ${(m(rawKey, (x) => x.rss) / MiB).toFixed(1)} MB`
    })
    // The target, independent of the Node version's own footprint: at most 25 MB above a
    // raw node:http server started the same way on the same Node.
    const rawRss = m(rawKey, (x) => x.rss) / MiB
    rows.push({
      scenario: "S6 idle process",
      metric: `RSS after start above raw node:http: ${label}`,
      peer: "raw node:http + 25 MB",
      ratio: rss / (rawRss + 25),
      target: "<= 1x",
      met: rss <= rawRss + 25,
      note: `+${(rss - rawRss).toFixed(1)} MB (${rss.toFixed(1)} MB; raw node:http ${rawRss.toFixed(1)} MB)`
    })
    if (key === "main-dist" && results.has("nest-tsx")) {
      const nestRss = m("nest-tsx", (x) => x.rss) / MiB
      rows.push({
        scenario: "S6 idle process",
        metric: `RSS after start: ${label}`,
        peer: "NestJS (Express): tsx",
        ratio: rss / nestRss,
        target: "",
        met: undefined,
        note: `${rss.toFixed(1)} MB; NestJS ${nestRss.toFixed(1)} MB, ${m("nest-tsx", (x) => x.startMs).toFixed(0)} ms to healthy`
      })
    }
    rows.push({
      scenario: "S6 idle process",
      metric: `start to first healthy answer: ${label}`,
      peer: "500 ms",
      ratio: start / 500,
      target: "<= 1x",
      met: start <= 500,
      note: `${start.toFixed(0)} ms; raw node:http ${m(rawKey, (x) => x.startMs).toFixed(0)} ms`
    })
  }
}

/**
 * S8: the gateway as npm start runs it (dist/main.js, built when stale), accepting bodies up to
 * 64 MiB (so that 30 MiB files, 40 MiB as base64 JSON, are accepted), every other setting default.
 */
const S8_MAX_BODY = 64 * MiB
const s8 = async (): Promise<string> => {
  execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: ROOT, stdio: "inherit" })
  const loadBefore = loadAverage()
  const once = async (name: string, streams: number) => {
    const dir = join(tmp, name)
    mkdirSync(dir, { recursive: true })
    const gw = await startServer({
      name,
      port: nextPort++,
      nodeArgs: [...startFlags(ROOT), "dist/main.js"],
      cwd: ROOT,
      env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_MAX_BODY_BYTES: String(S8_MAX_BODY) }
    })
    try {
      const r = await runS8(gw, log, streams)
      assertAliveServer(gw)
      log(`${name}: peak RSS ${(r.peakRss / MiB).toFixed(0)} MB, bad 5xx ${r.bad.length}, health p99 ${r.health.p99.toFixed(1)} ms, ${r.uploadsDone}/${S8.uploads} uploads in ${r.seconds.toFixed(1)} s`)
      if (r.bad.length > 0) failures.push(`${name}: ${r.bad.length} answers 5xx other than 503 with Retry-After, or failed: ${r.bad.slice(0, 5).join("; ")}`)
      return r
    } finally {
      await stopServer(gw)
    }
  }
  const whole = await once("S8", S8.streams)
  const withoutStreams = S8.streams > 0 ? await once("S8 without streams", 0) : undefined
  let commit = "unknown"
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim()
  } catch {
    // not a git checkout
  }
  return renderS8(whole, withoutStreams, {
    date: new Date().toISOString(),
    commit,
    settings: `SVC_MAX_BODY_BYTES=${S8_MAX_BODY} (30 MiB files accepted), other settings default (SVC_MAX_BODY_BYTES_IN_FLIGHT 128 MiB)`,
    load: `Node ${process.version}, ${cpuModel()}, server pinned to core 1, load generator to core 0, machine load average ${loadBefore.toFixed(2)} before, ${loadAverage().toFixed(2)} after (shared machine)`
  })
}

const assertAliveServer = (s: Server) => {
  if (!isAlive(s)) throw new Error(`S8: the gateway (pid ${s.pid}) exited; its last output:\n${s.output().slice(-3000)}`)
}

// ---------------------------------------------------------------------------------------------

const main = async () => {
  const pinned = pinSelf()
  const loadBefore = loadAverage()
  log(`temporary directory ${tmp}; load generator pinned to core 0: ${pinned}`)
  writeFileSync(fixtureFile, JSON.stringify(benchFixture()))
  const needsDb = ["S3", "S4", "S5"].some((s) => settings.only.has(s))
  // The gateway's database serves S1 and S3-S5; the 256 MiB document only S4 reads.
  const gatewayDb = needsDb || settings.only.has("S1")
  let docId = "00000000-0000-4000-8000-000000000000"
  if (settings.only.has("S4")) {
    writeDocument()
    log("256 MiB document written")
  }
  if (gatewayDb || settings.only.has("S2")) {
    log("preparing databases")
    const [gatewayDoc] = await Promise.all([
      gatewayDb ? prepareDb("gateway", settings.only.has("S4")) : null,
      needsDb ? prepareDb("raw", false) : null,
      needsDb ? prepareDb("nest", false) : null,
      settings.only.has("S2") ? prepareDb("upstream", false) : null
    ])
    if (gatewayDoc != null) docId = gatewayDoc
  }
  if (settings.only.has("S7")) {
    writeFileSync(sweepFixtureFile, JSON.stringify(sweepFixture()))
    await prepareDb("sweep", false, sweepFixtureFile)
    log("sweep database prepared")
  }
  // The build `npm start` runs (rebuilt when stale), or the one BENCH_GATEWAY_DIST names.
  const distDir = process.env.BENCH_GATEWAY_DIST ? join(ROOT, process.env.BENCH_GATEWAY_DIST) : join(ROOT, "dist")
  if (process.env.BENCH_GATEWAY_DIST === undefined || process.env.BENCH_GATEWAY_DIST === "") {
    execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: ROOT, stdio: "inherit" })
  }
  const upstreamUrl = settings.only.has("S2") ? await startUpstream() : "http://127.0.0.1:9"
  for (const spec of defineServers(docId, [...startFlags(ROOT), join(distDir, "main.js")], upstreamUrl)) specs.set(spec.key, spec)
  const wanted = new Set<string>()
  if (settings.only.has("S1")) ["gateway", ...(beforeDist === undefined ? [] : ["gateway-before"]), ...PEERS].forEach((k) => wanted.add(k))
  if (settings.only.has("S2")) {
    for (const k of ["gateway-s2", ...(beforeDist === undefined ? [] : ["gateway-s2-before"]), ...PEERS, ...S2_UPSTREAM_PEERS]) wanted.add(k)
  }
  if (settings.only.has("S7")) wanted.add("gateway-sweep")
  if (needsDb) DB_KEYS.forEach((k) => wanted.add(k))
  log(`starting ${[...wanted].join(", ")}`)
  await Promise.all([...wanted].map(async (key) => {
    const spec = specs.get(key)!
    servers.set(key, await startServer({ name: key, port: nextPort++, nodeArgs: spec.nodeArgs, env: spec.env, cwd: ROOT }))
  }))
  log(`pids: ${[...servers].map(([k, s]) => `${k} ${s.pid}`).join(", ")}`)

  const upload = uploadBody()
  const ingest = ingestBody()
  if (settings.only.has("S1")) await s1()
  if (settings.only.has("S2")) await s2()
  // S4 before S3: its RSS growth is measured on a gateway that has not yet held upload bodies.
  if (settings.only.has("S4")) await s4(docId)
  if (settings.only.has("S3")) await s3(upload)
  if (settings.only.has("S5")) await s5(ingest)
  if (settings.only.has("S7")) await s7()
  await stopAll()
  servers.clear()
  if (settings.only.has("S6")) await s6()
  const s8Section = settings.only.has("S8") ? await s8() : undefined
  // S8 alone: only its section of RESULTS.md is rewritten.
  if (settings.only.size === 1 && s8Section !== undefined) {
    let existing = ""
    try {
      existing = readFileSync(settings.results, "utf8")
    } catch {
      // no results yet
    }
    if (settings.results !== "-") writeFileSync(settings.results, spliceS8(existing, s8Section))
    console.log(`\n${s8Section}`)
    if (failures.length > 0) {
      console.log(`FAILURES: ${failures.join(" | ")}`)
      process.exitCode = 1
    }
    return
  }

  const order = ["S1", "S2", "S3", "S4", "S5", "S6", "S7"]
  rows.sort((a, b) => order.indexOf(a.scenario.slice(0, 2)) - order.indexOf(b.scenario.slice(0, 2)))
  medians.sort((a, b) => order.indexOf(a.scenario.slice(0, 2)) - order.indexOf(b.scenario.slice(0, 2)))
  checks.unshift(
    failures.length === 0
      ? "Every counted response was a 2xx: autocannon non2xx, errors and timeouts were 0 in every warm-up and round; every download was a 200 of exactly 256 MiB; every server answered the probe request of each scenario alike."
      : `FAILURES (the affected rounds are not valid): ${failures.join(" | ")}`
  )
  let commit = "unknown"
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim()
    const dirty = execFileSync("git", ["status", "--porcelain", "src"], { cwd: ROOT, encoding: "utf8" }).trim()
    if (dirty !== "") commit += " with uncommitted changes in src/"
  } catch {
    // not a git checkout
  }
  const markdown = renderResults({
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpuModel(),
    pinned,
    loadBefore,
    loadAfter: loadAverage(),
    commit,
    settings: `Warm-up ${settings.warmupS} s, ${settings.rounds} rounds of ${settings.roundS} s per server and scenario`,
    durationS: (performance.now() - started) / 1000
  }, rows, medians, checks)
  // S8's section: this run's, else the one the file had; the sections written by hand kept too.
  let previousS8: string | undefined
  let byHand: Array<string> = []
  try {
    const previous = readFileSync(settings.results, "utf8")
    previousS8 = sectionS8(previous)
    byHand = handSections(previous)
  } catch {
    // no results yet
  }
  const withS8 = s8Section ?? previousS8
  if (settings.results !== "-") {
    writeFileSync(settings.results, withHandSections(withS8 === undefined ? markdown : spliceS8(markdown, withS8), byHand))
  }
  console.log(`\n${markdown}`)
  if (failures.length > 0) process.exitCode = 1
}

main().then(
  () => {
    cleanupSync()
  },
  (error) => {
    console.error(error)
    cleanupSync()
    process.exit(1)
  }
)
