/**
 * Where S2's one-connection latency goes: the same set-up as bench/run.ts (the shipped build on
 * the workspace service behind the lookup-delay proxy), then N requests in sequence on one
 * kept-alive connection to each of: the gateway's task list, the proxy's board call (what the
 * gateway waits on), the workspace's board call (no delay). p50/p90 of each, and the gateway's
 * CPU per list.
 *
 * Usage: tsx bench/experiments/s2-latency.ts [requests]
 */
import * as http from "node:http"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BENCH_ENTITY_ID, TENANT_ID } from "../lib/fixture.js"
import { startS2World } from "../lib/upstream.js"
import { cpuMs, killAllSync, pinSelf, stopServer } from "../lib/proc.js"

const n = Number(process.argv[2] ?? "300")
const tmp = mkdtempSync(join(tmpdir(), "s2-latency-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
let port = 41_000 + Math.floor(Math.random() * 10_000)

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const get = (url: string) =>
  new Promise<number>((resolve, reject) => {
    const t0 = performance.now()
    http.get(url, { agent }, (res) => {
      res.on("data", () => {})
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`${url}: ${res.statusCode}`))))
    }).on("error", reject)
  })
const series = async (label: string, url: string, pid?: number) => {
  for (let i = 0; i < 30; i++) await get(url)
  const c0 = pid === undefined ? 0 : cpuMs(pid)
  const ms: Array<number> = []
  for (let i = 0; i < n; i++) ms.push(await get(url))
  const cpu = pid === undefined ? "" : ` cpu ${(((cpuMs(pid) - c0) * 1000) / n).toFixed(0)} us/req`
  ms.sort((a, b) => a - b)
  console.log(`${label.padEnd(28)} p50 ${ms[Math.floor(n / 2)]!.toFixed(2)} p90 ${ms[Math.floor(n * 0.9)]!.toFixed(2)} min ${ms[0]!.toFixed(2)}${cpu}`)
}

const main = async () => {
  pinSelf()
  // S2_PROFILE_DIR: a CPU profile of the gateway (written when it stops).
  const profile = process.env.S2_PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env.S2_PROFILE_DIR}`]
  const { workspace, proxy, gateway: gw } = await startS2World(tmp, () => port++, profile)
  const board = `/workspace/tenants/${TENANT_ID}/entities/${BENCH_ENTITY_ID}/board`
  for (let round = 0; round < 2; round++) {
    await series("workspace board (no delay)", `http://127.0.0.1:${workspace.port}${board}`, workspace.pid)
    await series("proxy board (5 ms)", `http://127.0.0.1:${proxy.port}${board}`)
    await series("gateway task list", `http://127.0.0.1:${gw.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`, gw.pid)
  }
  await stopServer(gw)
  await stopServer(proxy)
  await stopServer(workspace)
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
