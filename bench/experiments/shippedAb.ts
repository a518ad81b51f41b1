/**
 * CPU per request of two builds of the gateway as `npm start` runs them (dist/main.js under its
 * node flags, default settings, each on its own copy of the bench's embedded database), for a
 * change that bench/servers/gateway.ts does not hold (main.ts, scripts/build.mjs). Rounds are
 * interleaved A B, B A, ... so neither build always runs first. /v1/health and the 50-task list
 * (BENCH_ENTITY_ID), CPU from /proc. Each build runs under the start flags of the package.json
 * beside its dist directory (a `git archive` tree's own), else this tree's.
 *
 *   npx tsx bench/experiments/shippedAb.ts <before-dist> [after-dist=dist] [rounds=4] [seconds=3]
 *   AB_AFTER_FLAGS="--flag ..."   node flags added to the after build's (a trial of a flag)
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { prepareBenchDb } from "../lib/benchDb.js"
import { BENCH_ENTITY_ID, benchFixture } from "../lib/fixture.js"
import { type Measurement, median, runAutocannon } from "../lib/load.js"
import { killAllSync, pinSelf, type Server, startServer, stopAll } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [beforeArg, afterArg = "dist", roundsArg = "4", secondsArg = "3"] = process.argv.slice(2)
if (beforeArg === undefined) throw new Error("usage: shippedAb.ts <before-dist> [after-dist] [rounds] [seconds]")
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const tmp = mkdtempSync(join(tmpdir(), "shipped-ab-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})

const main = async () => {
  pinSelf()
  const fixture = join(tmp, "fixture.json")
  writeFileSync(fixture, JSON.stringify(benchFixture()))
  const builds = [["before", resolve(beforeArg)], ["after", resolve(afterArg)]] as const
  const servers: Array<Server> = []
  let port = 30_000 + Math.floor(Math.random() * 10_000)
  for (const [name, dist] of builds) {
    const db = `file:${join(tmp, `${name}.db`)}`
    prepareBenchDb(ROOT, db, fixture)
    const extra = name === "after" ? (process.env.AB_AFTER_FLAGS ?? "").split(" ").filter(Boolean) : []
    servers.push(await startServer({
      name,
      port: port++,
      nodeArgs: [...startFlags(existsSync(join(dirname(dist), "package.json")) ? dirname(dist) : ROOT), ...extra, join(dist, "main.js")],
      env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_DATABASE_URL: db },
      cwd: ROOT
    }))
  }
  const targets = { health: "/v1/health", tasks: `/v1/entities/${BENCH_ENTITY_ID}/tasks?limit=50` }
  const results = new Map<string, Array<Measurement>>()
  for (const [target, path] of Object.entries(targets)) {
    for (const s of servers) await runAutocannon({ url: `http://127.0.0.1:${s.port}${path}`, connections: 10, durationS: 1, pid: s.pid })
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? servers : [...servers].reverse()
      for (const s of order) {
        const m = await runAutocannon({ url: `http://127.0.0.1:${s.port}${path}`, connections: 10, durationS: seconds, pid: s.pid })
        if (m.failures.length > 0) throw new Error(`${s.name} ${target}: ${m.failures.slice(0, 3).join("; ")}`)
        const key = `${target} ${s.name}`
        results.set(key, [...(results.get(key) ?? []), m])
      }
    }
  }
  await stopAll()
  console.log(`${rounds} rounds of ${seconds} s, 10 connections; CPU us per request (median, then each round) and requests/s (median)`)
  for (const [key, ms] of results) {
    console.log(key.padEnd(16), median(ms.map((m) => m.cpuUsPerReq)).toFixed(0).padStart(6), `[${ms.map((m) => m.cpuUsPerReq.toFixed(0)).join(" ")}]`.padEnd(28), `${median(ms.map((m) => m.rps)).toFixed(0)}/s`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
