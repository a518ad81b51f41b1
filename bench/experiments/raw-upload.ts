/**
 * The raw upload (POST /v1/tasks/:taskId/files/raw) against bare node:http piping the body to a
 * file (bench/peers/rawFile.ts), both pinned to the server core:
 * 1. one 30 MiB upload at a time, the servers taking turns: seconds per upload, and the ratio
 *    (bare time / gateway time; target at least 0.9);
 * 2. 16 concurrent 30 MiB uploads to each: wall time, and, on the gateway, GET /v1/health every
 *    20 ms on one keep-alive connection meanwhile, from a process of its own (p99 target under
 *    100 ms; bench/lib/healthProbe.ts).
 * The gateway runs as `npm start` runs it (dist/main.js and its flags, embedded SQLite, default
 * settings but SVC_MAX_BODY_BYTES=64 MiB so a 30 MiB file fits either way).
 *
 * Usage: npm run build && tsx bench/experiments/raw-upload.ts [--rounds N] [--dist <build dir>]
 * (--dist: another build of the gateway, e.g. of the commit before a change, for a before/after.)
 */
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { randomBytes } from "node:crypto"
import { cpuMs, freePort, memory, pinSelf, type Server, startServer, stopAll, stopServer } from "../lib/proc.js"
import { startHealthProbe } from "../lib/healthProbe.js"
import { percentileOf, requestJson, sendRawUpload } from "../lib/uploadClient.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const MiB = 1024 * 1024
const SIZE = 30 * MiB
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const args = process.argv.slice(2)
const rounds = args.includes("--rounds") ? Number(args[args.indexOf("--rounds") + 1]) : 3
const CONCURRENT = 16
const DIST = args.includes("--dist") ? args[args.indexOf("--dist") + 1]! : join(ROOT, "dist")

const file = randomBytes(SIZE)
const agent = new http.Agent({ keepAlive: false })

const main = async () => {
  pinSelf()
  const tmp = mkdtempSync(join(tmpdir(), "raw-bench-"))
  try {
    const gateway = await startServer({
      name: "gateway",
      port: await freePort(),
      nodeArgs: [...startFlags(ROOT), join(DIST, "main.js")],
      cwd: ROOT,
      env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(tmp, "workspace.db")}`, SVC_MAX_BODY_BYTES: String(64 * MiB) }
    })
    const bare = await startServer({ name: "bare", port: await freePort(), nodeArgs: ["--import", "tsx", join(ROOT, "bench/peers/rawFile.ts")], cwd: ROOT })
    const task = await requestJson(gateway.port, "POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "bank-reconciliation", context: { accountId: "1000" } })
    const gatewayPath = `/v1/tasks/${task.id}/files/raw?source=bench&fileName=bench.pdf`
    const paths = new Map<Server, string>([[gateway, gatewayPath], [bare, "/upload"]])
    const times = new Map<Server, Array<number>>([[gateway, []], [bare, []]])
    // Warm-up, then one at a time, taking turns.
    for (const s of [gateway, bare]) await sendRawUpload(s.port, paths.get(s)!, file, agent)
    for (let round = 0; round < rounds; round++) {
      for (const s of round % 2 === 0 ? [gateway, bare] : [bare, gateway]) {
        const r = await sendRawUpload(s.port, paths.get(s)!, file, agent)
        if (r.status !== 201) throw new Error(`${s.name}: ${r.status}`)
        times.get(s)!.push(r.ms)
      }
    }
    const med = (xs: Array<number>) => percentileOf(xs, 50)
    const g1 = med(times.get(gateway)!)
    const b1 = med(times.get(bare)!)
    console.log(`one at a time (median of ${rounds}): gateway ${g1.toFixed(0)} ms (${(SIZE / MiB / (g1 / 1000)).toFixed(0)} MiB/s), bare ${b1.toFixed(0)} ms (${(SIZE / MiB / (b1 / 1000)).toFixed(0)} MiB/s), ratio ${(b1 / g1).toFixed(2)}x`)
    // 16 at once.
    const concurrent = async (s: Server, probe: boolean) => {
      // In a process of its own: this one's loop is busy sending the uploads.
      const prober = probe ? await startHealthProbe(s.port, s.pid) : undefined
      const cpu = cpuMs(s.pid)
      const t = performance.now()
      let peak = memory(s.pid).rss
      const sampler = setInterval(() => (peak = Math.max(peak, memory(s.pid).rss)), 50)
      const rs = await Promise.all(Array.from({ length: CONCURRENT }, () => sendRawUpload(s.port, paths.get(s)!, file, agent)))
      const wall = performance.now() - t
      clearInterval(sampler)
      const health = prober === undefined ? undefined : (await prober.stop()).map((p) => p.ms)
      const failed = rs.filter((r) => r.status !== 201).map((r) => r.status)
      return { wall, cpu: (cpuMs(s.pid) - cpu) / 1000, peak, failed, health }
    }
    const before = memory(gateway.pid).rss
    const gc = await concurrent(gateway, true)
    const bc = await concurrent(bare, false)
    const h = gc.health!
    console.log(
      `${CONCURRENT} x 30 MiB at once: gateway ${(gc.wall / 1000).toFixed(2)} s (cpu ${gc.cpu.toFixed(1)} s, RSS ${(before / MiB).toFixed(0)} -> peak ${(gc.peak / MiB).toFixed(0)} MB, failed ${JSON.stringify(gc.failed)}), ` +
        `bare ${(bc.wall / 1000).toFixed(2)} s (cpu ${bc.cpu.toFixed(1)} s), ratio ${(bc.wall / gc.wall).toFixed(2)}x`
    )
    console.log(`health during the gateway's ${CONCURRENT} uploads: p50/p99/max ${percentileOf(h, 50).toFixed(1)}/${percentileOf(h, 99).toFixed(1)}/${percentileOf(h, 100).toFixed(1)} ms (${h.length} requests)`)
    await stopServer(gateway)
    await stopServer(bare)
  } finally {
    await stopAll()
    rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
