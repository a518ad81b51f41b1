/**
 * S3's collections per build: each tree's built gateway (`<tree>/dist/main.js` under npm start's
 * node flags and `--trace-gc`, pinned to core 1, on its own copy of the bench database), loaded
 * with 1 MiB base64 uploads at 4 connections, the builds taking turns (the order reversed every
 * round). Prints uploads/s, CPU per upload (from /proc) and mark-compacts per 100 uploads.
 *
 * Usage: tsx bench/experiments/s3-collections.ts <rounds> <seconds> name=<tree> [name=<tree> ...]
 */
import { spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { prepareBenchDb } from "../lib/benchDb.js"
import { benchFixture, BENCH_TASK_ID, uploadBody } from "../lib/fixture.js"
import { runAutocannon } from "../lib/load.js"
import { startFlags } from "../lib/startFlags.js"
import { pinSelf } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"

const [roundsArg, secondsArg, ...trees] = process.argv.slice(2)
const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const tmp = mkdtempSync(join(tmpdir(), "s3gc-"))
const fixture = join(tmp, "fixture.json")
writeFileSync(fixture, JSON.stringify(benchFixture()))
const body = uploadBody()
pinSelf()
const results: Record<string, Array<string>> = {}
let port = firstBenchPort()
for (let r = 0; r < Number(roundsArg); r++) {
  for (const t of r % 2 === 0 ? trees : [...trees].reverse()) {
    const [name, dir] = t.split("=") as [string, string]
    const url = `file:${join(tmp, `${name}.db`)}`
    prepareBenchDb(ROOT, url, fixture)
    const log = join(tmp, `${name}-${r}.log`)
    const fd = openSync(log, "w")
    const p = port++
    const child = spawn("taskset", ["-c", "1", process.execPath, "--trace-gc", ...startFlags(ROOT), join(dir, "dist/main.js")], {
      env: { ...process.env, PORT: String(p), HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_DATABASE_URL: url, SVC_LOG_LEVEL: "warning", SVC_MAX_BODY_BYTES: String(4 * 1024 * 1024) },
      stdio: ["ignore", fd, fd]
    })
    for (let i = 0; i < 100; i++) { try { if ((await fetch(`http://127.0.0.1:${p}/v1/health`)).ok) break } catch {} await new Promise((r) => setTimeout(r, 100)) }
    const target = `http://127.0.0.1:${p}/v1/tasks/${BENCH_TASK_ID}/files`
    await runAutocannon({ url: target, method: "POST", body, headers: { "content-type": "application/json" }, connections: 4, durationS: 2, pid: child.pid! })
    const before = readFileSync(log, "utf8").split("\n").filter((l) => l.includes("Mark-Compact")).length
    const m = await runAutocannon({ url: target, method: "POST", body, headers: { "content-type": "application/json" }, connections: 4, durationS: Number(secondsArg), pid: child.pid! })
    const mcs = readFileSync(log, "utf8").split("\n").filter((l) => l.includes("Mark-Compact")).length - before
    child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r)); closeSync(fd)
    ;(results[name] ??= []).push(`${m.rps.toFixed(0)}/s cpu ${m.cpuUsPerReq.toFixed(0)}us MC/100 ${(100 * mcs / m.completed).toFixed(1)}`)
    console.log(name, r, results[name]!.at(-1))
  }
}
for (const [k, v] of Object.entries(results)) console.log(k.padEnd(8), v.join(" | "))
rmSync(tmp, { recursive: true, force: true })
process.exit(0)
