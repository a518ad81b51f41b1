/**
 * Where the gateway's time and memory go: CPU profiles (`node --cpu-prof`) of the gateway as
 * `npm start` runs it (dist/main.js, rebuilt when stale, on a prepared database; S2 with
 * SVC_WORKSPACE_URL: the workspace service behind bench/servers/slowUpstream.ts, as bench/run.ts) under the load of each scenario, and a heap snapshot (plus a start-up CPU profile) of an idle
 * gateway for S6. Profiles are written to bench/.profiles/ and summarized on stdout.
 *
 * Usage: tsx bench/profile.ts [S1,S2,S3,S4,S5,S6] [seconds]
 * Environment: PROFILE_ENTRY (the S6 entry; default src/main.ts bundled like bench/run.ts does);
 * PROFILE_S2_CONNECTIONS=1 profiles S2 at one connection (its latency's load) instead of 10;
 * PROFILE_PEER=raw|fastify|nest profiles that peer instead of the gateway (S1-S5), for comparison;
 * PROFILE_S1_FLOOR=1 profiles bench/experiments/s1-floor.ts (bare HttpServer.serve) under S1's load;
 * PROFILE_NODE_FLAGS="--trace-gc ..." adds node flags to the shipped gateway's (with --trace-gc, each
 * kind of collection is summed up); PROFILE_GREP=<text> prints the gateway's output lines holding it.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { bundle } from "./lib/bundle.js"
import { startSlowUpstream } from "./lib/upstream.js"
import { prepareBenchDb } from "./lib/benchDb.js"
import { formatSummary, summarize } from "./lib/cpuprofile.js"
import { BENCH_ENTITY_ID, BENCH_TASK_ID, benchFixture, ingestBody, MiB, uploadBody } from "./lib/fixture.js"
import { formatHeap, summarizeHeap } from "./lib/heapsnapshot.js"
import { runAutocannon, runDownloads } from "./lib/load.js"
import { startFlags } from "./lib/startFlags.js"
import { killAllSync, memory, pinSelf, type Server, startServer, stopServer } from "./lib/proc.js"
import { firstBenchPort } from "./lib/ports.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const only = new Set((process.argv[2] ?? "S1,S2,S3,S4,S5,S6").split(","))
const seconds = Number(process.argv[3] ?? "8")
/** S2's connections (PROFILE_S2_CONNECTIONS): 10 as bench/run.ts's throughput, 1 as its latency. */
const s2Connections = Number(process.env.PROFILE_S2_CONNECTIONS ?? "10")
const out = join(ROOT, "bench/.profiles")
mkdirSync(out, { recursive: true })
const tmp = mkdtempSync(join(tmpdir(), "gateway-profile-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
const fixture = join(tmp, "fixture.json")
writeFileSync(fixture, JSON.stringify(benchFixture()))
let port = firstBenchPort()

const INCLUSIVE = ["writev", "writeBuffer", "writeUtf8String", "parserOnHeadersComplete", "parserOnBody", "JSON.parse", "parse", "stringify", "test", "exec"]

/** PROFILE_NODE_FLAGS: more flags for the gateway's node (with --trace-gc, its collections are summed up). */
const extraFlags = (process.env.PROFILE_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")

/** Count and pause time of each kind of collection in the trace's last lines (the output's tail). */
const gcSummary = (output: string) => {
  const kinds = new Map<string, { count: number; ms: number }>()
  for (const m of output.matchAll(/ ms: ([A-Za-z-]+(?: \(reduce\))?)[^\n]*?, ([\d.]+) \/ [\d.]+ ms/g)) {
    const kind = kinds.get(m[1]!) ?? { count: 0, ms: 0 }
    kind.count++
    kind.ms += Number(m[2])
    kinds.set(m[1]!, kind)
  }
  return [...kinds].map(([k, v]) => `  ${k}: ${v.count} collections, ${v.ms.toFixed(1)} ms paused (${(v.ms / v.count).toFixed(2)} ms each)`).join("\n")
}

/** Starts the gateway with --cpu-prof, runs `load` (warm-up, then the profiled load), stops it, summarizes. */
const profileUnderLoad = async (
  name: string,
  env: Record<string, string>,
  load: (server: Server, durationS: number) => Promise<unknown>
) => {
  const dir = join(out, name)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const peer = process.env.PROFILE_PEER
  // The bare HttpServer.serve of bench/experiments/s1-floor.ts: the floor inside @effect/platform-node.
  const floor = name === "S1" && process.env.PROFILE_S1_FLOOR === "1"
  const server = await startServer({
    name,
    port: port++,
    nodeArgs: floor || peer !== undefined || env.BENCH_WORKSPACE !== undefined
      ? ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--import", "tsx", floor ? "bench/experiments/s1-floor.ts" : peer !== undefined ? `bench/peers/${peer}.ts` : "bench/servers/gateway.ts"]
      : ["--cpu-prof", `--cpu-prof-dir=${dir}`, ...startFlags(ROOT), ...extraFlags, "dist/main.js"],
    env: floor ? { VARIANT: "effect" } : peer !== undefined
      ? { ...env, BENCH_FIXTURE: fixture, ...(existsSync(join(tmp, "doc.bin")) ? { BENCH_DOC_FILE: join(tmp, "doc.bin"), BENCH_DOC_ID: documentId } : {}) }
      : env,
    cwd: ROOT
  })
  await load(server, 3)
  const before = memory(server.pid)
  const t0 = performance.now()
  await load(server, seconds)
  const loadMs = performance.now() - t0
  await stopServer(server, 10_000)
  if (extraFlags.includes("--trace-gc")) console.log(gcSummary(server.output()))
  if (process.env.PROFILE_GREP !== undefined) console.log(server.output().split("\n").filter((l) => l.includes(process.env.PROFILE_GREP!)).join("\n"))
  // The main thread's profile is the largest; tsx's loader thread writes a small one.
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile")).map((f) => join(dir, f))
  const main = files.map((f) => ({ f, size: Number(execFileSync("stat", ["-c", "%s", f], { encoding: "utf8" })) })).sort((a, b) => b.size - a.size)[0]!.f
  console.log(`\n===== ${name}${peer !== undefined ? ` (peer ${peer})` : ""}: CPU profile of the last ${(loadMs / 1000).toFixed(1)} s of load (${main.slice(ROOT.length)}); RSS before ${(before.rss / MiB).toFixed(0)} MB`)
  console.log(formatSummary(summarize(main, INCLUSIVE, 30, loadMs)))
}

/** The peers serve the S4 document from the file itself, under any id. */
let documentId = "00000000-0000-4000-8000-000000000000"

const prepare = (name: string, document?: string): string | null =>
  prepareBenchDb(ROOT, `file:${join(tmp, `${name}.db`)}`, fixture, document)
/**
 * The gateway as `npm start` runs it (dist/main.js, its node flags, default settings; built when
 * stale) on a prepared database, with the bench's 4 MiB body cap (bench/run.ts).
 */
const shippedEnv = (name: string) => ({
  HOST: "127.0.0.1",
  SVC_ADMIN_PORT: "0",
  SVC_MAX_BODY_BYTES: String(4 * MiB),
  SVC_DATABASE_URL: `file:${join(tmp, `${name}.db`)}`,
  // The peers read these (PROFILE_PEER).
  BENCH_DB: `file:${join(tmp, `${name}.db`)}`,
  BENCH_MAX_BODY: String(4 * MiB)
})

const main = async () => {
  pinSelf()
  execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: ROOT, stdio: "inherit" })
  if (only.has("S1")) {
    prepare("s1")
    await profileUnderLoad("S1", shippedEnv("s1"), (s, d) => runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/health`, connections: 10, durationS: d, pid: s.pid }))
  }
  if (only.has("S2")) {
    // As bench/run.ts measures S2: the shipped build reading the workspace service over HTTP,
    // through the proxy that holds each next-step lookup LOOKUP_MS (both on the load core).
    prepare("upstream")
    const { workspace, proxy, url } = await startSlowUpstream(() => port++, `file:${join(tmp, "upstream.db")}`)
    const env = { HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_WORKSPACE_URL: url, SVC_TENANT_SLUG: "acme" }
    await profileUnderLoad("S2", env, (s, d) =>
      runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`, connections: s2Connections, durationS: d, pid: s.pid }))
    await stopServer(proxy)
    await stopServer(workspace)
  }
  if (only.has("S3")) {
    prepare("s3")
    const body = uploadBody()
    await profileUnderLoad("S3", shippedEnv("s3"), (s, d) =>
      runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/tasks/${BENCH_TASK_ID}/files`, method: "POST", body, headers: { "content-type": "application/json" }, connections: 4, durationS: d, pid: s.pid }))
  }
  if (only.has("S4")) {
    const doc = join(tmp, "doc.bin")
    execFileSync("sh", ["-c", `head -c ${256 * MiB} /dev/urandom > ${doc}`])
    const id = prepare("s4", doc)!
    documentId = id
    await profileUnderLoad("S4", shippedEnv("s4"), (s, d) =>
      runDownloads({ url: `http://127.0.0.1:${s.port}/v1/tasks/${BENCH_TASK_ID}/files/${id}/download`, connections: 2, durationS: d, expectedBytes: 256 * MiB, pid: s.pid }))
  }
  if (only.has("S5")) {
    prepare("s5")
    const body = ingestBody()
    await profileUnderLoad("S5", shippedEnv("s5"), (s, d) =>
      runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/tasks/${BENCH_TASK_ID}/data/ingest`, method: "POST", body, headers: { "content-type": "application/json" }, connections: 2, durationS: d, pid: s.pid }))
  }
  if (only.has("S6")) {
    const entry = process.env.PROFILE_ENTRY ?? "src/main.ts"
    const bundled = await bundle(join(ROOT, entry), join(ROOT, "bench/.build/profile"), "main")
    const dir = join(out, "S6")
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    const env = { HOST: "127.0.0.1", SVC_DATABASE_URL: `file:${join(tmp, "s6.db")}`, BENCH_WORKSPACE: "embedded", BENCH_DB: `file:${join(tmp, "s6.db")}` }
    // First start creates and seeds the database; the profiled start is the second.
    await stopServer(await startServer({ name: "s6-seed", port: port++, nodeArgs: [bundled], env, cwd: ROOT }))
    const started = await startServer({
      name: "s6",
      port: port++,
      nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`, "--cpu-prof-interval=100", `--heapsnapshot-signal=SIGUSR2`, `--diagnostic-dir=${dir}`, bundled],
      env,
      cwd: ROOT
    })
    await sleep(1000)
    const idle = memory(started.pid)
    process.kill(started.pid, "SIGUSR2")
    let snapshot: string | undefined
    for (let i = 0; i < 100 && snapshot === undefined; i++) {
      await sleep(200)
      snapshot = readdirSync(dir).find((f) => f.endsWith(".heapsnapshot") && !f.endsWith(".tmp"))
      if (snapshot !== undefined) await sleep(500) // let the writer finish
    }
    await stopServer(started, 10_000)
    const status = readdirSync(dir)
    console.log(`\n===== S6: ${entry} bundled (${bundled.slice(ROOT.length)}), started in ${started.startMs.toFixed(0)} ms (with the profiler on); RSS ${(idle.rss / MiB).toFixed(1)} MB after 1 s idle`)
    const prof = status.find((f) => f.endsWith(".cpuprofile"))
    if (prof !== undefined) console.log(`-- start-up CPU profile (spawn to exit)\n${formatSummary(summarize(join(dir, prof), [], 25))}`)
    if (snapshot !== undefined) console.log(`-- heap snapshot after 1 s idle\n${formatHeap(summarizeHeap(join(dir, snapshot)))}`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
