/**
 * Where the event loop stalls during 16 concurrent 30 MiB raw uploads: GET /v1/health every
 * 20 ms (its start time and latency), while strace records the gateway's main thread (the
 * event loop: syscalls of that thread only, each with its duration). Prints every probe slower
 * than STALL_MS with the main thread's syscalls of 5 ms or more that overlap it, and a summary
 * of the main thread's fsync/fdatasync calls.
 *
 * Usage: npm run build && tsx bench/experiments/upload-stalls.ts [--dist <dir>] [--no-strace]
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { randomBytes } from "node:crypto"
import { setTimeout as sleep } from "node:timers/promises"
import { cpuMs, freePort, getStatus, pinSelf, SERVER_CORE } from "../lib/proc.js"
import { packageOf } from "../lib/cpuprofile.js"
import { startHealthProbe } from "../lib/healthProbe.js"
import { percentileOf, requestJson, sendRawUpload } from "../lib/uploadClient.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const args = process.argv.slice(2)
const DIST = args.includes("--dist") ? args[args.indexOf("--dist") + 1]! : join(ROOT, "dist")
const PROF = args.includes("--prof")
const TRACE = !args.includes("--no-strace") && !PROF
const MiB = 1024 * 1024
const SIZE = 30 * MiB
const CONCURRENT = 16
const STALL_MS = 40
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

const file = randomBytes(SIZE)
const upload = (port: number, path: string) => sendRawUpload(port, path, file, false).then((r) => r.status)

/** The traced calls: syncs, renames, the log's writes and SQLite's file locks. */
const TRACED = "fsync,fdatasync,rename,pwrite64,fcntl"

/**
 * The gateway as npm start runs it, pinned to the server core; with TRACE under strace (-f: every
 * thread, each line its tid; seccomp-bpf: only the traced calls stop a thread). The node pid is
 * strace's child.
 */
const startGateway = async (tmp: string, traceFile: string) => {
  const port = await freePort()
  const prof = PROF ? ["--cpu-prof", `--cpu-prof-dir=${join(tmp, "prof")}`, "--cpu-prof-interval", "250"] : []
  // STALLS_DROP_FLAG: one of npm start's node flags left out (e.g. --expose-gc), to see what it costs.
  const flags = startFlags(ROOT).filter((f) => f !== process.env.STALLS_DROP_FLAG)
  const node = [process.execPath, ...flags, ...prof, join(DIST, "main.js")]
  const command = TRACE ? ["strace", "-f", "--seccomp-bpf", "-ttt", "-T", "-e", `trace=${TRACED}`, "-o", traceFile, ...node] : node
  const child = spawn("taskset", ["-c", String(SERVER_CORE), ...command], {
    cwd: ROOT,
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(tmp, "workspace.db")}`, SVC_MAX_BODY_BYTES: String(64 * MiB) },
    stdio: ["ignore", "ignore", "inherit"]
  })
  for (let i = 0; i < 600 && (await getStatus(port, "/v1/health", 500)) !== 200; i++) await sleep(50)
  const pid = TRACE ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(" ")[0]) : child.pid!
  return { port, pid, child }
}

/** SIGTERM to the node process; resolves once the spawned child (taskset's exec: node, or strace) has exited. */
const stopServer = async (g: { pid: number; child: ChildProcess }) => {
  if (g.child.exitCode !== null || g.child.signalCode !== null) return
  const exited = new Promise((r) => g.child.once("exit", r))
  process.kill(g.pid, "SIGTERM")
  await exited
}

/**
 * The profile's stretches of at least `minMs` without an idle sample (the loop never waited in
 * epoll), each with its top self-time functions and the outermost frames below the root.
 */
const busyStretches = (file: string, minMs: number): Array<string> => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: Array<number> }>; samples: Array<number>; timeDeltas: Array<number> }
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const name = (id: number) => {
    const f = byId.get(id)!.callFrame
    return `${f.functionName || "(anonymous)"} ${packageOf(f as never)}:${f.lineNumber + 1}`
  }
  const out: Array<string> = []
  let start = -1
  const flush = (end: number) => {
    let us = 0
    const self = new Map<string, number>()
    for (let i = start; i < end; i++) {
      const dt = profile.timeDeltas[i + 1] ?? 0
      us += dt
      // A few frames up: what called the hot function.
      let chain = name(profile.samples[i]!)
      let cur = parent.get(profile.samples[i]!)
      for (let k = 0; k < 3 && cur !== undefined && byId.get(cur)!.callFrame.functionName !== "(root)"; k++, cur = parent.get(cur)) chain += " < " + name(cur)
      self.set(chain, (self.get(chain) ?? 0) + dt)
    }
    if (us / 1000 < minMs) return
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 4).map(([n, t]) => `    ${(t / 1000).toFixed(1)} ms ${n}`)
    out.push(`busy ${(us / 1000).toFixed(0)} ms:`, ...top)
  }
  for (let i = 0; i < profile.samples.length; i++) {
    const idle = byId.get(profile.samples[i]!)!.callFrame.functionName === "(idle)"
    if (!idle && start < 0) start = i
    if (idle && start >= 0) {
      flush(i)
      start = -1
    }
  }
  return out
}

const main = async () => {
  pinSelf()
  const tmp = mkdtempSync(join(tmpdir(), "stalls-"))
  const traceFile = join(tmp, "strace.txt")
  const gateway = await startGateway(tmp, traceFile)
  try {
    const task = await requestJson(gateway.port, "POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "bank-reconciliation", context: { accountId: "1000" } })
    const path = `/v1/tasks/${task.id}/files/raw?source=bench&fileName=bench.pdf`
    await upload(gateway.port, path) // warm-up
    // In a process of its own: this one's loop is busy sending the uploads.
    const probe = await startHealthProbe(gateway.port, gateway.pid)
    const cpu = cpuMs(gateway.pid)
    const t = performance.now()
    const statuses = await Promise.all(Array.from({ length: CONCURRENT }, () => upload(gateway.port, path)))
    const wall = performance.now() - t
    const probes = await probe.stop()
    const ms = probes.map((p) => p.ms)
    console.log(`16 x 30 MiB: ${(wall / 1000).toFixed(2)} s, server cpu ${((cpuMs(gateway.pid) - cpu) / 1000).toFixed(1)} s, statuses ${[...new Set(statuses)].join(",")}`)
    console.log(`health p50/p99/max ${percentileOf(ms, 50).toFixed(1)}/${percentileOf(ms, 99).toFixed(1)}/${percentileOf(ms, 100).toFixed(1)} ms (${ms.length})`)
    if (TRACE) {
      const fds = new Map<string, string>()
      for (const fd of readdirSync(`/proc/${gateway.pid}/fd`)) {
        try {
          fds.set(fd, readlinkSync(`/proc/${gateway.pid}/fd/${fd}`).replace(tmp, ""))
        } catch {
          // closed meanwhile
        }
      }
      await stopServer(gateway)
      const calls = readFileSync(traceFile, "utf8").split("\n").flatMap((line) => {
        const m = /^(\d+) +(\d+\.\d+) (\w+)\((.*)\) += (.*?) <(\d+\.\d+)>$/.exec(line)
        return m === null ? [] : [{ tid: Number(m[1]), start: Number(m[2]), name: m[3]!, args: m[4]!.slice(0, 60), result: m[5]!, dur: Number(m[6]) }]
      })
      const all = calls.length
      const elsewhere = calls.filter((c) => c.tid !== gateway.pid)
      calls.splice(0, calls.length, ...calls.filter((c) => c.tid === gateway.pid))
      console.log(`traced calls: ${all}, on other threads ${elsewhere.length} (fsync/fdatasync there: ${elsewhere.filter((c) => c.name.includes("sync")).length}, max ${(Math.max(0, ...elsewhere.map((c) => c.dur)) * 1000).toFixed(0)} ms)`)
      const syncs = calls.filter((c) => c.name === "fsync" || c.name === "fdatasync")
      const from = probes[0]?.at ?? 0
      const until = Math.max(...probes.map((p) => p.at + p.ms / 1000))
      const loopSyncs = syncs.filter((c) => c.start >= from && c.start <= until)
      const poolSyncs = elsewhere.filter((c) => c.name.includes("sync") && c.start >= from && c.start <= until)
      console.log(`during the uploads: ${loopSyncs.length} fsync/fdatasync on the loop thread (total ${(loopSyncs.reduce((a, c) => a + c.dur, 0) * 1000).toFixed(0)} ms, max ${(Math.max(0, ...loopSyncs.map((c) => c.dur)) * 1000).toFixed(1)} ms), ${poolSyncs.length} on other threads (max ${(Math.max(0, ...poolSyncs.map((c) => c.dur)) * 1000).toFixed(1)} ms)`)
      const t0 = calls[0]?.start ?? 0
      const uploadsFrom = probes[0]?.at ?? 0
      console.log("main thread syncs (s from the first traced call; * during the uploads): " +
        syncs.map((c) => `${(c.start - t0).toFixed(2)}${c.start >= uploadsFrom ? "*" : ""} ${c.name}(${c.args} ${fds.get(c.args) ?? "?"}) ${(c.dur * 1000).toFixed(1)} ms`).join(", "))
      console.log(`main thread: ${calls.length} syscalls; ${syncs.length} fsync/fdatasync, total ${(syncs.reduce((a, c) => a + c.dur, 0) * 1000).toFixed(0)} ms, max ${(Math.max(0, ...syncs.map((c) => c.dur)) * 1000).toFixed(1)} ms`)
      const byName = new Map<string, { n: number; total: number; max: number }>()
      for (const c of calls) {
        const e = byName.get(c.name) ?? { n: 0, total: 0, max: 0 }
        e.n++
        e.total += c.dur
        e.max = Math.max(e.max, c.dur)
        byName.set(c.name, e)
      }
      const top = [...byName.entries()].filter(([n]) => n !== "epoll_wait" && n !== "epoll_pwait" && n !== "epoll_pwait2").sort((a, b) => b[1].total - a[1].total).slice(0, 8)
      console.log("main thread syscall time (no epoll): " + top.map(([n, e]) => `${n} ${e.n}x ${(e.total * 1000).toFixed(0)} ms (max ${(e.max * 1000).toFixed(1)})`).join("; "))
      for (const p of probes.filter((p) => p.ms >= STALL_MS)) {
        const end = p.at + p.ms / 1000
        const inside = calls.filter((c) => c.start + c.dur > p.at && c.start < end && c.dur >= 0.005 && !c.name.startsWith("epoll"))
        const syncMs = calls.filter((c) => c.start + c.dur > p.at && c.start < end && c.name.includes("sync"))
          .reduce((a, c) => a + (Math.min(end, c.start + c.dur) - Math.max(p.at, c.start)), 0) * 1000
        console.log(`stall ${p.ms.toFixed(0)} ms at ${p.at.toFixed(3)}: loop thread on CPU ${p.ran.toFixed(0)} ms, waiting for a CPU ${p.queued.toFixed(0)} ms, in fsync ${syncMs.toFixed(0)} ms, off CPU otherwise ${(p.ms - p.ran - p.queued).toFixed(0)} ms; the process's other threads on CPU ${p.others.toFixed(0)} ms; ` +
          (inside.map((c) => `${c.name}(${c.args}) ${(c.dur * 1000).toFixed(0)} ms`).join(", ") || "no syscall >= 5 ms"))
      }
    } else if (PROF) {
      await stopServer(gateway)
      const dir = join(tmp, "prof")
      for (const f of readdirSync(dir)) for (const line of busyStretches(join(dir, f), 20)) console.log(line)
    } else {
      for (const p of probes.filter((p) => p.ms >= STALL_MS)) {
        console.log(`stall ${p.ms.toFixed(0)} ms at ${p.at.toFixed(3)}: loop thread on CPU ${p.ran.toFixed(0)} ms, waiting for a CPU ${p.queued.toFixed(0)} ms, off CPU ${(p.ms - p.ran - p.queued).toFixed(0)} ms, the process's other threads on CPU ${p.others.toFixed(0)} ms`)
      }
    }
  } finally {
    await stopServer(gateway)
    if (args.includes("--keep")) console.log(`kept ${tmp}`)
    else rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
