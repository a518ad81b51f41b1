/**
 * S1 (GET /v1/health, 10 connections) against the shipped build with its request log going to
 * different readers: a pipe the parent reads (as bench/run.ts and most supervisors do), and
 * /dev/null. The gateway's stdout, when a pipe, is written synchronously by Node on Linux, so a
 * reader that lags stalls the gateway's event loop for as long as the pipe is full.
 *
 * Usage: tsx bench/experiments/s1-logsink.ts [rounds=3] [seconds=5]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, openSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { runAutocannon } from "../lib/load.js"
import { pinSelf, SERVER_CORE } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const rounds = Number(process.argv[2] ?? "3")
const seconds = Number(process.argv[3] ?? "5")
const tmp = mkdtempSync(join(tmpdir(), "s1-logsink-"))
let port = firstBenchPort()

type Sink = "pipe" | "pipe-discard" | "devnull"
const start = async (sink: Sink) => {
  const p = port++
  const out = sink === "devnull" ? openSync("/dev/null", "w") : "pipe"
  const child = spawn("taskset", ["-c", String(SERVER_CORE), process.execPath, ...startFlags(ROOT), "dist/main.js"], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(p), HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(tmp, `${sink}.db`)}` },
    stdio: ["ignore", out, "inherit"]
  })
  // As bench/lib/proc.ts: the parent keeps the last 20,000 characters.
  let log = ""
  if (sink === "pipe") child.stdout?.on("data", (chunk: Buffer) => (log = (log + chunk.toString("utf8")).slice(-20_000)))
  else child.stdout?.resume()
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${p}/v1/health`)).ok) break
    } catch {}
    await new Promise((r) => setTimeout(r, 50))
  }
  return { child, url: `http://127.0.0.1:${p}/v1/health`, log: () => log }
}

const main = async () => {
  pinSelf()
  const names: Array<Sink> = ["pipe", "pipe-discard", "devnull"]
  const servers = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await start(n)] as const))) as Record<Sink, Awaited<ReturnType<typeof start>>>
  const results: Record<string, Array<{ rps: number; p50: number; p99: number; cpu: number }>> = { pipe: [], "pipe-discard": [], devnull: [] }
  for (const s of Object.values(servers)) await runAutocannon({ url: s.url, connections: 10, durationS: 2, pid: s.child.pid! })
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) {
      const s = servers[name]
      const m = await runAutocannon({ url: s.url, connections: 10, durationS: seconds, pid: s.child.pid! })
      results[name]!.push({ rps: m.rps, p50: m.p50, p99: m.p99, cpu: m.cpuUsPerReq })
    }
  }
  for (const [name, rs] of Object.entries(results)) {
    const med = (k: "rps" | "p50" | "p99" | "cpu") => [...rs.map((x) => x[k])].sort((a, b) => a - b)[Math.floor(rs.length / 2)]!
    console.log(`${name.padEnd(13)} ${med("rps").toFixed(0)} req/s  p50 ${med("p50").toFixed(2)}  p99 ${med("p99").toFixed(2)} ms  cpu ${med("cpu").toFixed(1)} us/req   rounds p99 ${rs.map((x) => x.p99.toFixed(2)).join(" ")}`)
  }
  for (const s of Object.values(servers)) s.child.kill("SIGTERM")
  await new Promise((r) => setTimeout(r, 500))
  rmSync(tmp, { recursive: true, force: true })
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
