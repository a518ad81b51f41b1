/**
 * S2 and S5 on each store: the same gateway (bench/servers/gateway.ts over the embedded
 * workspace) once on SQLite and once on PostgreSQL (a server started as the tests start it,
 * test/support/postgres.ts: fsync off, so this measures the store's work, not the disk).
 *
 * - S2: GET /v1/entities/:id/tasks (50 tasks, each with its next-step lookup), 10 connections.
 * - S5: POST /v1/tasks/:id/data/ingest of 1,000 events of about 2 KB, 2 connections.
 *
 * Rounds alternate between the two servers; the median of the rounds is reported. Both gateways
 * are pinned to the server core (bench/lib/proc.ts); the PostgreSQL server is not pinned.
 *
 * Usage: npm run bench:stores (BENCH_ROUNDS, default 3; BENCH_ROUND_S, default 5). Writes
 * bench/STORES.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createDatabase, startPostgres } from "../test/support/postgres.js"
import { prepareBenchDb } from "./lib/benchDb.js"
import { BENCH_ENTITY_ID, BENCH_TASK_ID, benchFixture, EVENT_COUNT, ingestBody } from "./lib/fixture.js"
import { median, type Measurement, runAutocannon } from "./lib/load.js"
import { cpuModel, loadAverage, type Server, startServer, stopAll } from "./lib/proc.js"
import { firstBenchPort } from "./lib/ports.js"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const roundS = Number(process.env.BENCH_ROUND_S ?? 5)

const prepare = (url: string, fixtureFile: string) => prepareBenchDb(ROOT, url, fixtureFile)

interface Scenario {
  readonly name: string
  readonly unit: string
  readonly value: (m: Measurement) => number
  readonly run: (server: Server, durationS: number) => Promise<Measurement>
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-stores-"))
  const pg = await startPostgres()
  try {
    const fixtureFile = join(dir, "fixture.json")
    writeFileSync(fixtureFile, JSON.stringify(benchFixture()))
    const urls = { SQLite: `file:${join(dir, "bench.db")}`, PostgreSQL: await createDatabase(pg.adminUrl, "bench") }
    for (const url of Object.values(urls)) prepare(url, fixtureFile)
    let port = firstBenchPort()
    const servers = new Map<string, Server>()
    for (const [store, url] of Object.entries(urls)) {
      servers.set(store, await startServer({
        name: store,
        port: port++,
        nodeArgs: ["--import", "tsx", "bench/servers/gateway.ts"],
        env: { BENCH_WORKSPACE: "embedded", BENCH_DB: url },
        cwd: ROOT
      }))
    }
    const ingest = ingestBody()
    const scenarios: ReadonlyArray<Scenario> = [
      {
        name: "S2 GET /v1/entities/:id/tasks (50 tasks), 10 connections",
        unit: "req/s",
        value: (m) => m.rps,
        run: (s, durationS) =>
          runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/entities/${BENCH_ENTITY_ID}/tasks`, connections: 10, durationS, pid: s.pid })
      },
      {
        name: `S5 ingest ${EVENT_COUNT.toLocaleString("en")} events of 2 KB, 2 connections`,
        unit: "rows/s",
        value: (m) => m.rps * EVENT_COUNT,
        run: (s, durationS) =>
          runAutocannon({
            url: `http://127.0.0.1:${s.port}/v1/tasks/${BENCH_TASK_ID}/data/ingest`,
            method: "POST",
            body: ingest,
            headers: { "content-type": "application/json" },
            connections: 2,
            durationS,
            pid: s.pid
          })
      }
    ]
    const lines: Array<string> = []
    const failures: Array<string> = []
    for (const scenario of scenarios) {
      const results = new Map<string, Array<Measurement>>()
      for (const server of servers.values()) await scenario.run(server, 2) // warm-up
      for (let r = 0; r < rounds; r++) {
        for (const [store, server] of servers) {
          const m = await scenario.run(server, roundS)
          if (m.failures.length > 0) failures.push(`${scenario.name} on ${store}: ${m.failures.join(", ")}`)
          results.set(store, [...(results.get(store) ?? []), m])
        }
      }
      for (const [store, ms] of results) {
        const value = median(ms.map(scenario.value))
        const p99 = median(ms.map((m) => m.p99))
        const cpu = median(ms.map((m) => m.cpuUsPerReq))
        lines.push(`| ${scenario.name} | ${store} | ${value.toFixed(0)} ${scenario.unit} | ${p99.toFixed(0)} ms | ${(cpu / 1000).toFixed(2)} ms |`)
        console.log(lines.at(-1))
      }
    }
    const markdown = [
      "# S2 and S5 on SQLite and on PostgreSQL",
      "",
      `${new Date().toISOString()}, Node ${process.version}, ${cpuModel()}; load average ${loadAverage()} at the end.`,
      `Warm-up 2 s, ${rounds} rounds of ${roundS} s per store, alternating; medians. PostgreSQL ${pg.adminUrl.split("@")[1]?.split("/")[0]} ` +
        "is a local server with fsync off (as in the tests), not pinned; the gateways are pinned to one core.",
      "",
      "| scenario | store | throughput | p99 latency | gateway CPU per request |",
      "| --- | --- | --- | --- | --- |",
      ...lines,
      "",
      failures.length === 0 ? "Every response was a 2xx." : `FAILURES: ${failures.join(" | ")}`,
      ""
    ].join("\n")
    writeFileSync(join(ROOT, "bench", "STORES.md"), markdown)
    console.log(markdown)
  } finally {
    await stopAll()
    await pg.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
