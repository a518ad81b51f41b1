/**
 * S1 (GET /v1/health, 10 keep-alive connections) across process starts: each round starts every
 * build afresh, one after the other, so what a process draws at start (the nextTick lottery,
 * bench/PROFILE.md, ninth pass) shows as spread between starts, not as noise within one. Each
 * set is `[@<entry>] <node flags>` (default entry dist/main.js); the server is pinned to core 1,
 * this process and autocannon to core 0; 2 s of warm-up, then 5 s measured. The servers' output
 * goes to /dev/null, or to a file each with S1_OUTPUT=file (as bench/run.ts does).
 *
 * Usage: tsx bench/experiments/s1-starts.ts <rounds> "<set A>" "<set B>" ...
 * e.g.   tsx bench/experiments/s1-starts.ts 5 "@scratch/before/main.js $FLAGS" "$FLAGS"
 */
import { execFileSync, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runAutocannon } from "../lib/load.js"

const [roundsArg = "3", ...sets] = process.argv.slice(2)
if (sets.length === 0) throw new Error("usage: s1-starts.ts <rounds> \"[@entry] <node flags>\" ...")
execFileSync("taskset", ["-pc", "0", String(process.pid)], { stdio: "ignore" })

for (let round = 0; round < Number(roundsArg); round++) {
  for (const [i, set] of sets.entries()) {
    const dir = mkdtempSync(join(tmpdir(), "s1-starts-"))
    const port = 40_000 + Math.floor(Math.random() * 9_000)
    const words = set.split(" ").filter(Boolean)
    const entry = words[0]?.startsWith("@") ? words.shift()!.slice(1) : "dist/main.js"
    const out = process.env.S1_OUTPUT === "file" ? openSync(join(dir, "out.log"), "a") : "ignore"
    const child = spawn("taskset", ["-c", "1", process.execPath, ...words, entry], {
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${dir}/w.db` },
      stdio: ["ignore", out, "inherit"]
    })
    if (typeof out === "number") closeSync(out)
    try {
      for (let k = 0; k < 100; k++) {
        const up = await fetch(`http://127.0.0.1:${port}/v1/health`).then(() => true, () => false)
        if (up) break
        await new Promise((r) => setTimeout(r, 100))
      }
      const load = { url: `http://127.0.0.1:${port}/v1/health`, connections: 10, pid: child.pid! }
      await runAutocannon({ ...load, durationS: 2 })
      const m = await runAutocannon({ ...load, durationS: 5 })
      console.log(`set ${i} round ${round}: ${Math.round(m.rps)} req/s, p50 ${m.p50.toFixed(2)} ms, p99 ${m.p99.toFixed(2)} ms, CPU ${m.cpuUsPerReq.toFixed(1)} us/req`)
    } finally {
      const exited = new Promise((r) => child.once("exit", r))
      child.kill("SIGTERM")
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
