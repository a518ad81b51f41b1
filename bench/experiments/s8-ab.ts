/**
 * S8 (bench/lib/wholeLoad.ts) for a change, before and after, in the same session: each build
 * (a directory made by `node scripts/build.mjs <dir>`) is started as `npm start` starts dist/,
 * and the builds take turns, the order rotating each round. Prints peak RSS, health's
 * p50/p99/max, bad answers and the upload time per run, then the medians per build.
 *
 * Usage: tsx bench/experiments/s8-ab.ts <build dir>[@NAME=value,...] ... [--rounds N] [--streams N]
 * (`@NAME=value,...`: settings for that variant's server, e.g. dist@SVC_EVENTS_PAGE_BYTES=262144)
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, pinSelf, startServer, stopAll, stopServer } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"
import { runS8, S8, type S8Result } from "../lib/wholeLoad.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name)
  if (i === -1) return fallback
  const v = Number(args[i + 1])
  args.splice(i, 2)
  return v
}
const rounds = option("--rounds", 2)
const streams = option("--streams", S8.streams)
const builds = args
const dirOf = (build: string) => resolve(build.split("@")[0]!)
const envOf = (build: string): Record<string, string> =>
  Object.fromEntries((build.split("@")[1] ?? "").split(",").filter((kv) => kv !== "").map((kv) => kv.split("=", 2) as [string, string]))
if (builds.length === 0) throw new Error("usage: s8-ab.ts <build dir>... [--rounds N] [--streams N]")

const tmp = mkdtempSync(join(tmpdir(), "s8-ab-"))
const mb = (b: number) => (b / 1024 / 1024).toFixed(0)
const line = (name: string, r: S8Result) =>
  `${name.padEnd(24)} peak ${mb(r.peakRss).padStart(5)} MB  health p50/p99/max ${r.health.p50.toFixed(1)}/${r.health.p99.toFixed(1)}/${
    r.health.max.toFixed(0)
  } ms (${r.health.count})  loop p99/max ${r.loopDelay.p99.toFixed(0)}/${r.loopDelay.max.toFixed(0)} ms (client ${r.clientLoopDelay.p99.toFixed(0)}/${r.clientLoopDelay.max.toFixed(0)})  cpu ${r.cpuSeconds.toFixed(1)} s  bad ${r.bad.length}  uploads ${r.uploadsDone} in ${r.seconds.toFixed(1)} s (${r.uploadRetries} retries)  streams ${r.streamsOpened}`

const main = async () => {
  pinSelf()
  const results = new Map<string, Array<S8Result>>(builds.map((b) => [b, []]))
  for (let round = 0; round < rounds; round++) {
    const order = builds.map((_, i) => builds[(i + round) % builds.length]!)
    for (const build of order) {
      const dir = join(tmp, `${round}-${results.get(build)!.length}-${builds.indexOf(build)}`)
      mkdirSync(dir, { recursive: true })
      const server = await startServer({
        name: build,
        port: await freePort(),
        nodeArgs: [...startFlags(ROOT), join(dirOf(build), "main.js")],
        cwd: ROOT,
        env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_MAX_BODY_BYTES: String(64 * 1024 * 1024), ...envOf(build) }
      })
      try {
        const r = await runS8(server, () => {}, streams)
        results.get(build)!.push(r)
        console.log(`round ${round + 1} ${line(build.slice(build.lastIndexOf("/") + 1), r)}${r.bad.length > 0 ? `\n  ${r.bad.slice(0, 3).join("; ")}` : ""}`)
      } finally {
        await stopServer(server)
      }
    }
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const [build, rs] of results) {
    console.log(`median ${build.slice(build.lastIndexOf("/") + 1).padEnd(20)} peak ${mb(median(rs.map((r) => r.peakRss)))} MB  health p99 ${median(rs.map((r) => r.health.p99)).toFixed(1)} ms  max ${median(rs.map((r) => r.health.max)).toFixed(0)} ms  loop p99 ${median(rs.map((r) => r.loopDelay.p99)).toFixed(0)} ms  cpu ${median(rs.map((r) => r.cpuSeconds)).toFixed(1)} s  uploads ${median(rs.map((r) => r.seconds)).toFixed(1)} s`)
  }
}

main().finally(async () => {
  await stopAll()
  rmSync(tmp, { recursive: true, force: true })
})
