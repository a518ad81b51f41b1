/**
 * What bounds S2 at 10 connections: bench/run.ts's set-up (the shipped build on the workspace
 * service behind the lookup-delay proxy, both on the load generator's core 0, the gateway on
 * core 1), autocannon at 10 connections on the gateway's task list, and the CPU each process
 * spent per list (/proc), with each core's busy share (/proc/stat) over the same seconds.
 *
 * Usage: tsx bench/experiments/s2-ceiling.ts [seconds=8] [rounds=2]
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { BENCH_ENTITY_ID } from "../lib/fixture.js"
import { runAutocannon } from "../lib/load.js"
import { startS2World } from "../lib/upstream.js"
import { coreBusy, coreTicks, cpuMs, killAllSync, pinSelf, stopServer } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"

const seconds = Number(process.argv[2] ?? "8")
const rounds = Number(process.argv[3] ?? "2")
const tmp = mkdtempSync(join(tmpdir(), "s2-ceiling-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
let port = firstBenchPort()

const main = async () => {
  pinSelf()
  const { workspace, proxy, gateway: gw } = await startS2World(tmp, () => port++)
  const target = `http://127.0.0.1:${gw.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`
  await runAutocannon({ url: target, connections: 10, durationS: 3, pid: gw.pid })
  for (let round = 0; round < rounds; round++) {
    const pids = { gateway: gw.pid, workspace: workspace.pid, proxy: proxy.pid, "load generator": process.pid }
    const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]))
    const c0 = coreTicks()
    const m = await runAutocannon({ url: target, connections: 10, durationS: seconds, pid: gw.pid })
    const c1 = coreTicks()
    const perList = Object.entries(pids).map(([k, pid]) =>
      `${k} ${(((cpuMs(pid) - before[k]!) * 1000) / m.completed).toFixed(0)} us`)
    const busy = coreBusy(c0, c1).map((b) => b.toFixed(2))
    console.log(`round ${round + 1}: ${m.rps.toFixed(0)} lists/s p50 ${m.p50} ms; CPU per list: ${perList.join(", ")}; core0 busy ${busy[0]}, core1 busy ${busy[1]}${m.failures.length ? `; ${m.failures.join(", ")}` : ""}`)
  }
  await stopServer(gw)
  await stopServer(proxy)
  await stopServer(workspace)
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
