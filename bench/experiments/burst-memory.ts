/**
 * A cell's memory around a burst: each tree's built gateway (`<tree>/dist/main.js` under npm
 * start's flags, default settings, its own database), its RSS and private memory idle after start,
 * at the end of 8 s of 1 MiB uploads (4 connections) beside task lists (10 connections), and 15 s
 * later (after the idle collection, SVC_IDLE_COLLECT_MS 10 s); then the first 200 task lists after
 * the idle period, and 3 s of uploads (what the next burst costs after it). DUMP=1: the largest
 * mappings 15 s after the burst.
 *
 * Usage: tsx bench/experiments/burst-memory.ts name=<tree> [name=<tree> ...]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { randomBytes } from "node:crypto"
import { fileURLToPath } from "node:url"
import { runAutocannon } from "../lib/load.js"
import { startFlags } from "../lib/startFlags.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

const mem = (pid: number) => {
  const s = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)![1]) / 1024
  return `rss ${kb("Rss").toFixed(0)} private ${(kb("Private_Clean") + kb("Private_Dirty")).toFixed(0)} MB`
}
let port = firstBenchPort()
for (const t of process.argv.slice(2)) {
  const [name, dir] = t.split("=") as [string, string]
  const db = mkdtempSync(join(tmpdir(), "burst-"))
  const p = port++
  const child = spawn(process.execPath, [...startFlags(ROOT), join(dir, "dist/main.js")], {
    env: { ...process.env, PORT: String(p), HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_DATABASE_URL: `file:${join(db, "w.db")}`, SVC_LOG_LEVEL: "warning" },
    stdio: "ignore"
  })
  for (let i = 0; i < 100; i++) { try { if ((await fetch(`http://127.0.0.1:${p}/v1/health`)).ok) break } catch {} await new Promise((r) => setTimeout(r, 100)) }
  await new Promise((r) => setTimeout(r, 12_000))
  const idle = mem(child.pid!)
  const task = await (await fetch(`http://127.0.0.1:${p}/v1/entities/8efaebe3-f600-4ec5-a77b-afb37a9b252d/tasks`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ workflowId: "bank-reconciliation", context: { accountId: "1000" } }) })).json() as { id: string }
  const body = JSON.stringify({ source: "s", fileName: "x.bin", data: randomBytes(1024 * 1024).toString("base64") })
  await Promise.all([
    runAutocannon({ url: `http://127.0.0.1:${p}/v1/tasks/${task.id}/files`, method: "POST", body, headers: { "content-type": "application/json" }, connections: 4, durationS: 8, pid: child.pid! }),
    runAutocannon({ url: `http://127.0.0.1:${p}/v1/entities/8efaebe3-f600-4ec5-a77b-afb37a9b252d/tasks`, connections: 10, durationS: 8, pid: child.pid! })
  ])
  const during = mem(child.pid!)
  await new Promise((r) => setTimeout(r, 15_000))
  const after = mem(child.pid!)
  if (process.env.DUMP) {
    const lines = readFileSync(`/proc/${child.pid}/smaps`, "utf8").split("\n")
    const maps: Array<[string, number]> = []
    let cur = ""
    for (const l of lines) {
      if (/^[0-9a-f]+-[0-9a-f]+ /.test(l)) cur = l.split(/\s+/).slice(5).join(" ") || "[anon]"
      const m = /^Rss:\s+(\d+)/.exec(l)
      if (m) maps.push([cur, Number(m[1]) / 1024])
    }
    const by = new Map<string, number>()
    for (const [k, v] of maps) by.set(k, (by.get(k) ?? 0) + v)
    console.log([...by].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k, v]) => `${v.toFixed(1)} MB ${k}`).join("\n"))
    const big = maps.filter(([k]) => k === "[anon]").map(([, v]) => v).sort((a, b) => b - a).slice(0, 12)
    console.log("largest anon mappings (MB):", big.map((v) => v.toFixed(1)).join(" "))
  }
  // The first requests after the idle period: latency of 200 task lists in sequence.
  const t0 = performance.now()
  for (let i = 0; i < 200; i++) await (await fetch(`http://127.0.0.1:${p}/v1/entities/8efaebe3-f600-4ec5-a77b-afb37a9b252d/tasks`)).arrayBuffer()
  const first = ((performance.now() - t0) / 200).toFixed(2)
  const t1 = performance.now()
  for (let i = 0; i < 200; i++) await (await fetch(`http://127.0.0.1:${p}/v1/entities/8efaebe3-f600-4ec5-a77b-afb37a9b252d/tasks`)).arrayBuffer()
  const next = ((performance.now() - t1) / 200).toFixed(2)
  // The next burst after the idle collection: uploads for 3 s.
  const again = await runAutocannon({ url: `http://127.0.0.1:${p}/v1/tasks/${task.id}/files`, method: "POST", body, headers: { "content-type": "application/json" }, connections: 4, durationS: 3, pid: child.pid! })
  console.log(`${name.padEnd(8)} next burst: ${again.rps.toFixed(0)} uploads/s, ${again.cpuUsPerReq.toFixed(0)} us CPU each`)
  console.log(`${name.padEnd(8)} idle: ${idle} | end of burst: ${during} | 15 s after: ${after} | lists after idle ${first} ms, then ${next} ms`)
  child.kill("SIGTERM"); await new Promise((r) => child.once("exit", r))
  rmSync(db, { recursive: true, force: true })
}
process.exit(0)
