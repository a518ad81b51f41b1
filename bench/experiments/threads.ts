/**
 * Where a write's CPU goes, thread by thread: the gateway (or raw node:http) bundled like the
 * bench, pinned to core 1, sent N uploads (S3) or 1,000-event ingests (S5) at a fixed
 * concurrency from core 0. Prints the server's CPU per request from /proc, split into its main
 * thread and every other thread (V8's GC and compiler helpers, the checkpoint worker), and
 * `--trace-gc`'s scavenges and mark-compacts per request. Used for the S3/S5 findings in
 * bench/PROFILE.md ("the main threads cost the same").
 *
 * Usage: tsx bench/experiments/threads.ts [s3|s4|s5] [requests=120] [node flags of the server...]
 * s4 downloads the document THREADS_DOCUMENT_MIB (needed) for THREADS_SECONDS on THREADS_CONCURRENCY connections.
 * THREADS_PEER=raw measures bench/peers/raw.ts instead; THREADS_CONCURRENCY (4); THREADS_DOCUMENT_MIB
 * (0) stores a document of that size first.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { bundle } from "../lib/bundle.js"
import { prepareBenchDb } from "../lib/benchDb.js"
import { runAutocannon, runDownloads } from "../lib/load.js"
import { cpuTicks, memory, statFields } from "../lib/proc.js"
import { BENCH_TASK_ID, benchFixture, ingestBody, uploadBody } from "../lib/fixture.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [scenario = "s3", requestsArg = "120", ...flags] = process.argv.slice(2)
const requests = Number(requestsArg)
const concurrency = Number(process.env.THREADS_CONCURRENCY ?? "4")
const raw = process.env.THREADS_PEER === "raw"

const tmp = mkdtempSync(join(tmpdir(), "gateway-threads-"))
const fixture = join(tmp, "fixture.json")
writeFileSync(fixture, JSON.stringify(benchFixture()))
const db = `file:${join(tmp, "bench.db")}`
// THREADS_DOCUMENT_MIB: a document of that size in the database first (as the bench's S4 leaves it).
const documentMib = Number(process.env.THREADS_DOCUMENT_MIB ?? "0")
const docFile = join(tmp, "document.bin")
if (documentMib > 0) writeFileSync(docFile, Buffer.alloc(documentMib << 20, 7))
const documentId = prepareBenchDb(ROOT, db, fixture, documentMib > 0 ? docFile : undefined)
const entry = raw
  ? await bundle(join(ROOT, "bench/peers/raw.ts"), join(ROOT, "bench/.build/threads"), "raw")
  : await bundle(join(ROOT, "bench/servers/gateway.ts"), join(ROOT, "bench/.build/threads"), "gateway")
const port = 45_000 + Math.floor(Math.random() * 1000)
const server = spawn("taskset", ["-c", "1", process.execPath, ...flags, "--trace-gc", entry], {
  env: { ...process.env, PORT: String(port), BENCH_WORKSPACE: "embedded", BENCH_DB: db, BENCH_FIXTURE: fixture, BENCH_MAX_BODY: String(4 << 20),
    // The raw peer serves the same document from its file.
    ...(documentId !== null ? { BENCH_DOC_FILE: docFile, BENCH_DOC_ID: documentId } : {}) },
  stdio: ["ignore", "pipe", "inherit"]
})
const pid = server.pid!
let trace = ""
server.stdout.on("data", (d: Buffer) => (trace += d.toString("utf8")))
process.on("exit", () => {
  server.kill("SIGKILL")
  rmSync(tmp, { recursive: true, force: true })
})

/** CPU ticks (1/100 s) of each thread of the server. */
const threadTicks = (): Map<string, number> =>
  new Map(readdirSync(`/proc/${pid}/task`).map((tid) => {
    const fields = statFields(`/proc/${pid}/task/${tid}/stat`)
    return [tid, fields === undefined ? 0 : cpuTicks(fields)]
  }))

/** Minor page faults of the whole server process so far. */
const minorFaults = (): number => Number(statFields(`/proc/${pid}/stat`)?.[7])

for (let i = 0; i < 200; i++) {
  if (await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)) break
  await sleep(50)
}
const download = scenario === "s4"
if (download && documentId === null) throw new Error("s4 needs THREADS_DOCUMENT_MIB")
const body = scenario === "s5" ? ingestBody() : uploadBody()
const path = download
  ? `/v1/tasks/${BENCH_TASK_ID}/files/${documentId}/download`
  : scenario === "s5" ? `/v1/tasks/${BENCH_TASK_ID}/data/ingest` : `/v1/tasks/${BENCH_TASK_ID}/files`
const post = async () => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, download ? {} : { method: "POST", body, headers: { "content-type": "application/json" } })
  if (r.status >= 300) throw new Error(`${r.status}: ${await r.text()}`)
  await r.arrayBuffer()
}
for (let i = 0; i < 5; i++) await post()

// THREADS_PHASES (1): the same load again on the same process, one line per phase (does it drift?).
for (let phase = 0; phase < Number(process.env.THREADS_PHASES ?? "1"); phase++) {
  // THREADS_IDLE_S: idle time before each phase after the first (the bench's rounds leave each server idle while the others run).
  if (phase > 0) await sleep(Number(process.env.THREADS_IDLE_S ?? "0") * 1000)
  const traceFrom = trace.length
  const before = threadTicks()
  // THREADS_CLIENT=autocannon: the bench's load generator for THREADS_SECONDS instead of N fetches.
  let done = requests
  const faultsBefore = minorFaults()
  if (download) {
    // s4: THREADS_SECONDS of back-to-back downloads on THREADS_CONCURRENCY connections.
    const m = await runDownloads({
      url: `http://127.0.0.1:${port}${path}`, connections: concurrency, durationS: Number(process.env.THREADS_SECONDS ?? "5"),
      expectedBytes: documentMib << 20, pid
    })
    done = m.completed
  } else if (process.env.THREADS_CLIENT === "autocannon") {
    const m = await runAutocannon({
      url: `http://127.0.0.1:${port}${path}`, method: "POST", body, headers: { "content-type": "application/json" },
      connections: concurrency, durationS: Number(process.env.THREADS_SECONDS ?? "5"), pid
    })
    done = m.completed
  } else {
    await Promise.all(Array.from({ length: concurrency }, async () => {
      for (let i = 0; i < requests / concurrency; i++) await post()
    }))
  }
  await sleep(100)
  const after = threadTicks()
  const perRequest = (ticks: number) => (ticks * 10) / done
  const threads = [...after].map(([tid, t]) => [tid === String(pid) ? "main" : tid, perRequest(t - (before.get(tid) ?? 0))] as const)
  const total = threads.reduce((s, [, ms]) => s + ms, 0)
  const lines = trace.slice(traceFrom).split("\n")
  const gc = (kind: RegExp) => {
    const hits = lines.filter((l) => kind.test(l))
    const ms = hits.reduce((s, l) => s + Number(/, ([\d.]+) \/ [\d.]+ ms/.exec(l)?.[1] ?? 0), 0)
    return `${(hits.length / done).toFixed(2)}/req (${(ms / done).toFixed(2)} ms)`
  }
  console.log(`${raw ? "raw node:http" : "gateway"} ${scenario} x${concurrency} ${flags.join(" ")}${phase > 0 ? ` (phase ${phase + 1})` : ""}`)
  console.log(`  server CPU ${total.toFixed(1)} ms/req: ${threads.filter(([, ms]) => ms >= 0.05).map(([t, ms]) => `${t} ${ms.toFixed(2)}`).join(", ")}`)
  console.log(`  scavenges ${gc(/Scavenge/)}, mark-compacts ${gc(/Mark-Compact/)}, minor page faults ${((minorFaults() - faultsBefore) / done).toFixed(0)}/req`)
  // THREADS_GC_REASONS=1: how many collections of each kind for each reason V8 gave.
  if (process.env.THREADS_GC_REASONS === "1") {
    const reasons = new Map<string, number>()
    const count = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    for (const line of lines) {
      // With --trace-incremental-marking: why each marking started.
      const start = /\[IncrementalMarking\] Start \(([^)]*)\)/.exec(line)
      if (start !== null) count(`marking start: ${start[1]}`)
      const kind = /Mark-Compact/.test(line) ? "mark-compact" : /Scavenge/.test(line) ? "scavenge" : undefined
      if (kind === undefined) continue
      count(`${kind}: ${line.slice(line.indexOf("current mu")).replace(/current mu = [\d.]+\)\s*/, "").trim()}`)
    }
    for (const [reason, count] of reasons) console.log(`    ${count} ${reason}`)
  }
}
// THREADS_TRACE_FILE: the server's whole --trace-gc output (and any other trace flag's) to a file.
if (process.env.THREADS_TRACE_FILE !== undefined) writeFileSync(process.env.THREADS_TRACE_FILE, trace)
// THREADS_RSS_AFTER_S: the server's RSS that long after the load (what an idle process keeps after a burst).
if (process.env.THREADS_RSS_AFTER_S !== undefined) {
  await sleep(Number(process.env.THREADS_RSS_AFTER_S) * 1000)
  console.log(`  RSS ${(memory(pid).rss / 1048576).toFixed(1)} MB, ${process.env.THREADS_RSS_AFTER_S} s after the load`)
}
process.exit(0)
