/**
 * Where S1's allocations come from: the built gateway (`<dir>/dist/main.js`, npm start's flags,
 * default settings) under N requests of GET /v1/health (10 connections), with V8's sampling heap
 * profiler counting every sampled allocation, those collected since included. Each allocation
 * site is mapped through the bundle's source maps and attributed like s1-attribute.ts (the
 * innermost frame of ours, else the leaf's module). Also prints bytes per request.
 *
 * Allocation per request does not move with the machine's load (unlike CPU time), so it is the
 * steady measure of what a change saves the garbage collector (GC was 35% of S1's CPU).
 *
 * Usage: tsx bench/experiments/s1-alloc.ts [dir=.] [requests=20000] [top=40]
 * ALLOC_LIVE=1: only the objects still in the heap at the end; ALLOC_LIVE=promoted: those and the
 * ones a full collection freed (what lived through young collections).
 * ALLOC_STACKS=1 (ALLOC_DEPTH=4): also where the native allocations (Map copies...) are called from.
 * ALLOC_CALLERS_OF=<function> (e.g. nextTick), or a module (a text with a "/", e.g. effect/SchemaAST):
 * where the allocations in that function or module come from.
 * ALLOC_WITHIN=requests.ts: also what is allocated (by leaf frame) in what that file of ours calls.
 * ALLOC_S2=1: S2 instead (the task list of the bench entity, the gateway on the workspace service
 * behind the lookup-delay proxy, as bench/run.ts's gateway-s2).
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import WebSocket from "ws"
import { startFlags } from "../lib/startFlags.js"
import { prepareBenchDb } from "../lib/benchDb.js"
import { BENCH_ENTITY_ID, benchFixture } from "../lib/fixture.js"
import { killAllSync } from "../lib/proc.js"
import { startSlowUpstream } from "../lib/upstream.js"
import { firstBenchPort } from "../lib/ports.js"

const [dirArg = ".", nArg = "20000", topArg = "40"] = process.argv.slice(2)
const dir = resolve(dirArg)
const requests = Number(nArg)
const tmp = mkdtempSync(join(tmpdir(), "gateway-alloc-"))
const port = firstBenchPort()

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface SamplingNode { callFrame: CallFrame; selfSize: number; id: number; children: Array<SamplingNode> }

const s2 = process.env.ALLOC_S2 === "1"
const path = s2 ? `/v1/entities/${BENCH_ENTITY_ID}/tasks` : "/v1/health"
const load = (n: number) =>
  new Promise<void>((done, fail) =>
    autocannon({ url: `http://127.0.0.1:${port}${path}`, connections: 10, amount: n }, (e) => (e ? fail(e) : done()))
  )

// The upstream's processes go with this one, however it ends (killAllSync: by their pids).
process.on("exit", killAllSync)

const main = async () => {
  let upstream: Record<string, string> = {}
  if (s2) {
    const fixture = join(tmp, "fixture.json")
    writeFileSync(fixture, JSON.stringify(benchFixture()))
    prepareBenchDb(dir, `file:${join(tmp, "upstream.db")}`, fixture)
    let next = port + 2
    const { url } = await startSlowUpstream(() => next++, `file:${join(tmp, "upstream.db")}`)
    upstream = { SVC_WORKSPACE_URL: url, SVC_TENANT_SLUG: "acme" }
  }
  const child = spawn(process.execPath, [...startFlags(dir), "--inspect=127.0.0.1:0", join(dir, "dist/main.js")], {
    env: { ...process.env, PORT: String(port), SVC_ADMIN_PORT: String(port + 1), SVC_DATABASE_URL: `file:${join(tmp, "db")}`, ...upstream },
    stdio: ["ignore", "ignore", "pipe"]
  })
  process.once("exit", () => child.exitCode === null && child.kill("SIGKILL"))
  const wsUrl = await new Promise<string>((done) => {
    let err = ""
    child.stderr!.on("data", (c: Buffer) => {
      err += c.toString()
      const m = /ws:\/\/\S+/.exec(err)
      if (m !== null) done(m[0])
    })
  })
  for (let i = 0; i < 100; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)
    if (ok) break
    await new Promise((r) => setTimeout(r, 100))
  }
  const ws = new WebSocket(wsUrl, { maxPayload: 2 ** 30 })
  await new Promise((r) => ws.once("open", r))
  let seq = 0
  const pending = new Map<number, (v: any) => void>()
  ws.on("message", (m) => {
    const msg = JSON.parse(m.toString())
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result)
  })
  const call = (method: string, params: object = {}) =>
    new Promise<any>((done) => {
      const id = ++seq
      pending.set(id, done)
      ws.send(JSON.stringify({ id, method, params }))
    })
  await load(5000) // warm-up
  await call("HeapProfiler.startSampling", {
    samplingInterval: 256,
    // ALLOC_LIVE=1: only what is still in the heap when sampling stops (what survived scavenges,
    // promoted garbage included until a full collection): the sites of objects that live long.
    // ALLOC_LIVE=promoted: what young collections did not free (promoted, then freed by a full one).
    includeObjectsCollectedByMajorGC: process.env.ALLOC_LIVE !== "1",
    includeObjectsCollectedByMinorGC: process.env.ALLOC_LIVE === undefined
  })
  await load(requests)
  const { profile } = await call("HeapProfiler.stopSampling") as { profile: { head: SamplingNode } }
  ws.close()
  child.kill("SIGTERM")

  const maps = new Map<string, TraceMap | null>()
  const sourceOf = (f: CallFrame): string => {
    if (f.url === "") return f.functionName.startsWith("(") ? f.functionName : `native ${f.functionName}`
    if (f.url.startsWith("node:")) return f.url
    if (!maps.has(f.url)) {
      const path = f.url.startsWith("file://") ? fileURLToPath(f.url) : f.url
      maps.set(f.url, existsSync(`${path}.map`) ? new TraceMap(readFileSync(`${path}.map`, "utf8")) : null)
    }
    const map = maps.get(f.url)!
    if (map === null) return f.url
    const source = originalPositionFor(map, { line: f.lineNumber + 1, column: f.columnNumber }).source ?? f.url
    const nm = source.lastIndexOf("node_modules/")
    if (nm >= 0) return source.slice(nm + "node_modules/".length).replace(/\/(src|dist)\//, "/")
    const s = source.indexOf("src/")
    return s >= 0 ? source.slice(s) : source
  }
  const totals = new Map<string, number>()
  /** ALLOC_STACKS=1: where the native allocations (Map copies...) are called from. */
  const callers = new Map<string, number>()
  let all = 0
  const walk = (node: SamplingNode, ours: string | undefined, stack: ReadonlyArray<string>) => {
    const source = sourceOf(node.callFrame)
    const fn = node.callFrame.functionName || "anonymous"
    const dispatch = source === "src/http/server/nodeServer.ts" && (fn === "proceed" || fn === "anonymous")
    const here = dispatch ? undefined : source.startsWith("src/") ? `${source} (${fn})` : ours
    const callersOf = process.env.ALLOC_CALLERS_OF
    if (
      node.selfSize > 0 && here === undefined &&
      (callersOf !== undefined
        ? fn === callersOf || (callersOf.includes("/") && source.includes(callersOf))
        : process.env.ALLOC_STACKS === "1" && source.startsWith("native"))
    ) {
      const key = `${source} <- ${stack.slice(-Number(process.env.ALLOC_DEPTH ?? 4)).reverse().join(" <- ")}`
      callers.set(key, (callers.get(key) ?? 0) + node.selfSize)
    }
    // ALLOC_WITHIN=<file of ours>: what the allocations counted for that file are (leaf frames).
    const within = process.env.ALLOC_WITHIN
    if (node.selfSize > 0 && within !== undefined && here !== undefined && here.includes(within)) {
      const key = `${here} > ${source} (${fn})`
      callers.set(key, (callers.get(key) ?? 0) + node.selfSize)
    }
    if (node.selfSize > 0) {
      const key = here ?? `${source} (${fn})`
      totals.set(key, (totals.get(key) ?? 0) + node.selfSize)
      all += node.selfSize
    }
    for (const c of node.children) walk(c, here, [...stack, `${source.replace(/^effect\//, "")}:${fn}`])
  }
  walk(profile.head, undefined, [])
  console.log(`${(all / requests).toFixed(0)} bytes sampled per request over ${requests} requests`)
  for (const [k, v] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg))) {
    console.log(`${(v / requests).toFixed(0).padStart(6)} B/req ${((v / all) * 100).toFixed(1).padStart(5)}%  ${k}`)
  }
  for (const [k, v] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${(v / requests).toFixed(0).padStart(6)} B/req  ${k}`)
  rmSync(tmp, { recursive: true, force: true })
}

main().then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
