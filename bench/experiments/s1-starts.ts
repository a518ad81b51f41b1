/**
 * S1 (GET /v1/health, 10 keep-alive connections) across process starts: each round starts every
 * build afresh, one after the other, so what a process draws at start (the nextTick lottery,
 * bench/PROFILE.md, ninth pass) shows as spread between starts, not as noise within one
 * (s1-shipped.ts keeps one process per build for all its rounds). Each set is
 * `[@<entry>] [NAME=value ...] <node flags>` (default entry dist/main.js; NAME=value words are
 * environment settings for that set, e.g. SVC_ADMIN_PORT=0), started by bench/lib/proc.ts like the
 * bench's servers (pinned to the server core, output to a file: BENCH_SERVER_LOG=pipe for a
 * pipe); 2 s of warm-up, then (after S1_IDLE_S seconds idle, default 0) 5 s measured.
 *
 * Usage: tsx bench/experiments/s1-starts.ts <rounds> "<set A>" "<set B>" ...
 * e.g.   tsx bench/experiments/s1-starts.ts 5 "@/tmp/before/dist/main.js $FLAGS" "$FLAGS"
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runAutocannon } from "../lib/load.js"
import { killAllSync, pinSelf, startServer, stopServer } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"

const [roundsArg = "3", ...sets] = process.argv.slice(2)
/** S1_IDLE_S: seconds the process sits idle between warm-up and measure (the bench's other servers' turns). */
const idleS = Number(process.env.S1_IDLE_S ?? 0)
if (sets.length === 0) throw new Error("usage: s1-starts.ts <rounds> \"[@entry] <node flags>\" ...")
const tmp = mkdtempSync(join(tmpdir(), "s1-starts-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
pinSelf()

let port = firstBenchPort()
for (let round = 0; round < Number(roundsArg); round++) {
  for (const [i, set] of sets.entries()) {
    const words = set.split(" ").filter(Boolean)
    const entry = words[0]?.startsWith("@") ? words.shift()!.slice(1) : "dist/main.js"
    const env: Record<string, string> = {}
    while (/^[A-Z][A-Z0-9_]*=/.test(words[0] ?? "")) {
      const [name, ...value] = words.shift()!.split("=")
      env[name!] = value.join("=")
    }
    const server = await startServer({
      name: `set${i}`,
      port: port++,
      nodeArgs: [...words, entry],
      env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(tmp, `set${i}-${round}.db`)}`, ...env }
    })
    try {
      const load = { url: `http://127.0.0.1:${server.port}/v1/health`, connections: 10, pid: server.pid }
      await runAutocannon({ ...load, durationS: 2 })
      if (idleS > 0) await new Promise((r) => setTimeout(r, idleS * 1000))
      const m = await runAutocannon({ ...load, durationS: 5 })
      console.log(`set ${i} round ${round}: ${Math.round(m.rps)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, CPU ${m.cpuUsPerReq.toFixed(1)} us/req`)
    } finally {
      await stopServer(server)
    }
  }
}
