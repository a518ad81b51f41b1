/**
 * S2's floor inside Effect: the gateway, the NestJS and raw node:http peers over the same workspace
 * service (run.ts's gateway-s2, nest-s2, raw-s2), and Effect's own HTTP server making the same
 * board call (s2-floor-server.ts: the peers' call, and Effect's HttpClient), autocannon at 10
 * connections in turns, user and system CPU per list from /proc. Then, optionally, the gateway and
 * NestJS under `strace -c -f` (system calls per list) and `perf record` (S2_PERF=1, S2_PERF_DIR;
 * each started with --perf-basic-prof).
 *
 * Usage: tsx bench/experiments/s2-floor.ts [seconds=6] [rounds=2] [strace=0]
 * S2_BEFORE=<build dir> (e.g. bench/.build/before, from `node scripts/build.mjs <dir>`): that build
 * too, as a second gateway on the same upstream; S2_ONLY=gateways: the gateways alone.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { BENCH_ENTITY_ID, benchFixture, LOOKUP_MS, TENANT_ID } from "../lib/fixture.js"
import { runAutocannon } from "../lib/load.js"
import { startS2World } from "../lib/upstream.js"
import { killAllSync, pinSelf, startServer, statFields, stopServer } from "../lib/proc.js"
import { firstBenchPort } from "../lib/ports.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

const seconds = Number(process.argv[2] ?? "6")
const rounds = Number(process.argv[3] ?? "2")
const withStrace = (process.argv[4] ?? "0") === "1"
const withPerf = process.env.S2_PERF === "1"
const tmp = mkdtempSync(join(tmpdir(), "s2-floor-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})
let port = firstBenchPort()

const userSys = (pid: number) => {
  const f = statFields(`/proc/${pid}/stat`)!
  return { user: Number(f[11]) * 10, sys: Number(f[12]) * 10 }
}

const straced = (pid: number, out: string) => {
  const child = spawn("strace", ["-c", "-f", "-o", out, "-p", String(pid)], { stdio: "ignore" })
  return async () => {
    child.kill("SIGINT")
    await new Promise((r) => child.once("exit", r))
    return readFileSync(out, "utf8")
  }
}

const main = async () => {
  pinSelf()
  const { workspace, proxy, gateway } = await startS2World(tmp, () => port++, withPerf ? ["--perf-basic-prof"] : [])
  const fixtureFile = join(tmp, "fixture.json")
  writeFileSync(fixtureFile, JSON.stringify(benchFixture()))
  const nest = await startServer({
    name: "nest-s2",
    port: port++,
    nodeArgs: [...(withPerf ? ["--perf-basic-prof"] : []), "--import", "tsx", "bench/peers/nest.ts"],
    env: { BENCH_FIXTURE: fixtureFile, BENCH_LOOKUP_MS: String(LOOKUP_MS), BENCH_UPSTREAM_URL: `http://127.0.0.1:${proxy.port}`, BENCH_DOC_FILE: join(tmp, "none"), BENCH_DOC_ID: "00000000-0000-4000-8000-000000000000" }
  })
  const tenantId = TENANT_ID
  const peer = (name: string, nodeArgs: Array<string>, env: Record<string, string> = {}) =>
    startServer({
      name,
      port: port++,
      nodeArgs: ["--import", "tsx", ...nodeArgs],
      env: { BENCH_FIXTURE: fixtureFile, BENCH_LOOKUP_MS: String(LOOKUP_MS), BENCH_UPSTREAM_URL: `http://127.0.0.1:${proxy.port}`, BENCH_TENANT_ID: tenantId, ...env }
    })
  const raw = await peer("raw-s2", ["bench/peers/raw.ts"])
  const effect = await peer("effect-floor", ["bench/experiments/s2-floor-server.ts"], { VARIANT: "effect" })
  const effectClient = await peer("effect-floor-client", ["bench/experiments/s2-floor-server.ts"], { VARIANT: "effect-client" })
  const before = process.env.S2_BEFORE === undefined ? undefined : await startServer({
    name: "gateway-before",
    port: port++,
    nodeArgs: [...startFlags(ROOT), join(process.env.S2_BEFORE, "main.js")],
    env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_WORKSPACE_URL: `http://127.0.0.1:${proxy.port}`, SVC_TENANT_SLUG: "acme" }
  })
  const gateways = before === undefined ? [gateway] : [gateway, before]
  const servers = process.env.S2_ONLY === "gateways" ? gateways : [...gateways, nest, raw, effect, effectClient]
  for (const s of servers) {
    await runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`, connections: 10, durationS: 3, pid: s.pid })
  }
  for (let round = 0; round < rounds; round++) {
    for (const s of round % 2 === 0 ? servers : [...servers].reverse()) {
      const url = `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`
      const a = userSys(s.pid)
      const upA = [userSys(workspace.pid), userSys(proxy.pid)]
      const selfA = process.cpuUsage()
      const m = await runAutocannon({ url, connections: 10, durationS: seconds, pid: s.pid })
      const b = userSys(s.pid)
      const upB = [userSys(workspace.pid), userSys(proxy.pid)]
      const self = process.cpuUsage(selfA)
      const per = (x: number) => ((x * 1000) / m.completed).toFixed(0)
      const cpu = (x: { user: number; sys: number }, y: { user: number; sys: number }) => per(y.user - x.user + y.sys - x.sys)
      // The upstream side (core 0): what the workspace service, the delay proxy and the load
      // generator (this process) spent per list, user + system.
      console.log(`round ${round + 1} ${s.name}: ${m.rps.toFixed(0)} lists/s; per list user ${per(b.user - a.user)} us, sys ${per(b.sys - a.sys)} us; workspace ${cpu(upA[0]!, upB[0]!)} us, proxy ${cpu(upA[1]!, upB[1]!)} us, load generator ${((self.user + self.system) / m.completed).toFixed(0)} us`)
    }
  }
  if (withStrace) {
    for (const s of [gateway, nest]) {
      const url = `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`
      const stop = straced(s.pid, join(tmp, `${s.name}.strace`))
      await new Promise((r) => setTimeout(r, 500))
      const m = await runAutocannon({ url, connections: 10, durationS: seconds, pid: s.pid })
      const summary = await stop()
      console.log(`\n${s.name} under strace: ${m.completed} lists`)
      for (const line of summary.split("\n")) {
        const cols = line.trim().split(/\s+/)
        if (cols.length >= 5 && /^\d/.test(cols[0]!)) {
          const calls = Number(cols[3])
          const name = cols[cols.length - 1]
          console.log(`  ${name!.padEnd(16)} ${(calls / m.completed).toFixed(2)} per list`)
        } else if (/total/.test(line)) console.log(`  total ${(Number(cols[2]) / m.completed).toFixed(2)} per list`)
      }
    }
  }
  if (withPerf) {
    for (const s of [gateway, nest]) {
      const url = `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`
      const out = join(process.env.S2_PERF_DIR ?? tmp, `${s.name}.perf`)
      const child = spawn("perf", ["record", "-e", "cpu-clock", "-F", "2000", "-g", "-o", out, "-p", String(s.pid)], { stdio: "ignore" })
      await new Promise((r) => setTimeout(r, 500))
      const m = await runAutocannon({ url, connections: 10, durationS: seconds, pid: s.pid })
      child.kill("SIGINT")
      await new Promise((r) => child.once("exit", r))
      console.log(`${s.name} perf: ${m.completed} lists -> ${out}`)
    }
  }
  for (const s of [effectClient, effect, raw, ...(before === undefined ? [] : [before])]) await stopServer(s)
  await stopServer(nest)
  await stopServer(gateway)
  await stopServer(proxy)
  await stopServer(workspace)
}
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1) })
