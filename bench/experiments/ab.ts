/**
 * Before/after of one code change, in one session: the gateway built from an earlier tree
 * (`git archive <commit> | tar -x -C <dir>`, node_modules linked in) and from this one, with
 * raw node:http as the yardstick, interleaved like the bench. Prints requests/s (or MB/s) and
 * CPU per request, each as a ratio to raw node:http measured in the same round, and the
 * after/before ratio. Used for the "measured better" claims in the commit messages.
 *
 * The gateways run as the bench runs them: an esbuild bundle of bench/servers/gateway.ts with
 * the node flags of `npm start` (AB_TSX=1: under tsx instead).
 *
 * Usage: tsx bench/experiments/ab.ts <s1|s2|s3|s4|s5> <before-dir> [rounds=4] [seconds=4]
 * AB_AFTER_FLAGS="<node flags>" (or "none") runs the "after" gateway with other node flags.
 */
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "../lib/bundle.js"
import { cleanBenchDb, prepareBenchDb } from "../lib/benchDb.js"
import { startFlags } from "../lib/startFlags.js"
import { BENCH_ENTITY_ID, BENCH_TASK_ID, benchFixture, ingestBody, LOOKUP_MS, MiB, uploadBody } from "../lib/fixture.js"
import { type Measurement, median, runAutocannon, runDownloads } from "../lib/load.js"
import { killAllSync, memory, pinSelf, sampleRss, type Server, startServer, stopAll } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [scenario = "s1", beforeArg, roundsArg = "4", secondsArg = "4"] = process.argv.slice(2)
if (beforeArg === undefined) throw new Error("usage: ab.ts <s1|s2|s3|s4> <before-dir> [rounds] [seconds]")
const BEFORE = resolve(beforeArg)
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const tmp = mkdtempSync(join(tmpdir(), "gateway-ab-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
const fixture = join(tmp, "fixture.json")
writeFileSync(fixture, JSON.stringify(benchFixture()))
const docFile = join(tmp, "doc.bin")
const DOC_BYTES = 256 * MiB
const dbUrl = (name: string) => `file:${join(tmp, `${name}.db`)}`

const prepare = (name: string, withDocument: boolean): string | null =>
  prepareBenchDb(ROOT, dbUrl(name), fixture, withDocument ? docFile : undefined)
const cleanDb = (name: string) => cleanBenchDb(dbUrl(name))

interface Candidate { readonly name: string; readonly cwd: string; readonly entry: string; readonly env: Record<string, string>; readonly db?: string }

const main = async () => {
  pinSelf()
  const embedded = scenario === "s3" || scenario === "s4" || scenario === "s5"
  let docId = "00000000-0000-4000-8000-000000000000"
  let afterDocId: string | null = null
  if (embedded) {
    const fd = openSync(docFile, "w")
    const block = randomBytes(16 * MiB)
    for (let i = 0; i < DOC_BYTES / block.length; i++) writeSync(fd, block)
    closeSync(fd)
    docId = prepare("before", scenario === "s4")!
    afterDocId = prepare("after", scenario === "s4")
    prepare("raw", false)
  }
  const gatewayEnv = (db: string): Record<string, string> => embedded
    ? { BENCH_WORKSPACE: "embedded", BENCH_DB: dbUrl(db), BENCH_MAX_BODY: String(4 * MiB) }
    : { BENCH_WORKSPACE: "memory", BENCH_FIXTURE: fixture, BENCH_LOOKUP_MS: String(LOOKUP_MS) }
  const candidates: Array<Candidate> = [
    {
      name: "raw node:http",
      cwd: ROOT,
      entry: "bench/peers/raw.ts",
      env: {
        BENCH_FIXTURE: fixture,
        BENCH_LOOKUP_MS: String(LOOKUP_MS),
        BENCH_MAX_BODY: String(4 * MiB),
        ...(embedded ? { BENCH_DB: dbUrl("raw"), BENCH_DOC_FILE: docFile, BENCH_DOC_ID: docId } : {})
      },
      db: "raw"
    },
    { name: "gateway before", cwd: BEFORE, entry: "bench/servers/gateway.ts", env: gatewayEnv("before"), db: "before" },
    { name: "gateway after", cwd: ROOT, entry: "bench/servers/gateway.ts", env: gatewayEnv("after"), db: "after" }
  ]
  let port = firstBenchPort()
  const servers: Array<Server> = []
  for (const c of candidates) {
    // AB_AFTER_FLAGS: node flags of the "after" gateway instead of npm start's ("none": no flags).
    const flags = c.name === "gateway after" && process.env.AB_AFTER_FLAGS !== undefined
      ? process.env.AB_AFTER_FLAGS === "none" ? [] : process.env.AB_AFTER_FLAGS.split(" ")
      : startFlags(ROOT)
    const nodeArgs = c.entry.startsWith("bench/servers/") && process.env.AB_TSX !== "1"
      ? [...flags, await bundle(join(c.cwd, c.entry), join(c.cwd, "bench/.build/ab"), "gateway")]
      : ["--import", "tsx", c.entry]
    servers.push(await startServer({ name: c.name, port: port++, nodeArgs, env: c.env, cwd: c.cwd }))
  }
  const upload = uploadBody()
  const ingest = ingestBody()
  const peaks = new Map<string, number>()
  const baseline = new Map(servers.map((s) => [s.name, memory(s.pid).rss]))
  const load = async (s: Server, durationS: number): Promise<Measurement> => {
    const base = `http://127.0.0.1:${s.port}`
    switch (scenario) {
      case "s1":
        return runAutocannon({ url: `${base}/v1/health`, connections: 10, durationS, pid: s.pid })
      case "s2":
        return runAutocannon({ url: `${base}/v1/entities/${BENCH_ENTITY_ID}/tasks`, connections: 10, durationS, pid: s.pid })
      case "s3": {
        const m = await runAutocannon({
          url: `${base}/v1/tasks/${BENCH_TASK_ID}/files`,
          method: "POST",
          body: upload,
          headers: { "content-type": "application/json" },
          connections: 4,
          durationS,
          pid: s.pid
        })
        await cleanDb(candidates.find((c) => c.name === s.name)!.db!)
        return m
      }
      case "s5": {
        const m = await runAutocannon({
          url: `${base}/v1/tasks/${BENCH_TASK_ID}/data/ingest`,
          method: "POST",
          body: ingest,
          headers: { "content-type": "application/json" },
          connections: 2,
          durationS,
          pid: s.pid
        })
        await cleanDb(candidates.find((c) => c.name === s.name)!.db!)
        return m
      }
      case "s4": {
        const sampler = sampleRss(s.pid)
        const m = await runDownloads({
          // Each gateway serves the document its own database holds; raw node:http the file.
          url: `${base}/v1/tasks/${BENCH_TASK_ID}/files/${s.name === "gateway after" ? afterDocId : docId}/download`,
          connections: 2,
          durationS,
          expectedBytes: DOC_BYTES,
          pid: s.pid
        })
        peaks.set(s.name, Math.max(peaks.get(s.name) ?? 0, sampler.stop()))
        return m
      }
      default:
        throw new Error(`unknown scenario ${scenario}`)
    }
  }
  for (const s of servers) await load(s, 2)
  const results = new Map<string, Array<Measurement>>(servers.map((s) => [s.name, []]))
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < servers.length; i++) {
      const s = servers[(i + r) % servers.length]!
      const m = await load(s, seconds)
      if (m.failures.length > 0) throw new Error(`${s.name}: ${m.failures.join("; ")}`)
      results.get(s.name)!.push(m)
    }
  }
  await stopAll()
  const value = scenario === "s4" ? (m: Measurement) => m.bytesPerSec : (m: Measurement) => m.rps
  const raw = results.get("raw node:http")!
  const before = results.get("gateway before")!
  console.log(`${scenario}: ${rounds} rounds of ${seconds} s; load average ${execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()}`)
  console.log("server".padEnd(18), "value".padStart(10), "vs raw".padStart(7), "CPU us/req".padStart(11), "capacity vs raw".padStart(16), "after/before".padStart(13), "RSS growth".padStart(11))
  for (const [name, ms] of results) {
    const v = median(ms.map(value))
    const vsRaw = median(ms.map((m, i) => value(m) / value(raw[i]!)))
    const cpu = median(ms.map((m) => m.cpuUsPerReq))
    const capacity = median(ms.map((m, i) => raw[i]!.cpuUsPerReq / m.cpuUsPerReq))
    const ab = median(ms.map((m, i) => value(m) / value(before[i]!)))
    const growth = peaks.has(name) ? `+${((peaks.get(name)! - baseline.get(name)!) / MiB).toFixed(1)} MB` : ""
    console.log(
      name.padEnd(18),
      (scenario === "s4" ? `${(v / 1e6).toFixed(0)} MB/s` : `${v.toFixed(0)}/s`).padStart(10),
      `${vsRaw.toFixed(2)}x`.padStart(7),
      cpu.toFixed(0).padStart(11),
      `${capacity.toFixed(2)}x`.padStart(16),
      `${ab.toFixed(2)}x`.padStart(13),
      growth.padStart(11)
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
