/**
 * The workspace service's task board alone (S2's upstream, without the delay proxy or the
 * gateway): builds of `npm run workspace` (an esbuild bundle of each tree's
 * src/workspace/server/main.ts, under npm start's node flags), each on its own database prepared
 * with the bench fixture, loaded with GET .../entities/<bench entity>/board (50 tasks) at
 * `connections` keep-alive connections, interleaved A B .. then .. B A, 0.5 s idle before each
 * measurement. Prints, per build, the median calls/s and CPU per board call (from /proc), and
 * each build's ratio to the first, and its RSS after the load. First checks that every build answers the same bytes.
 *
 * Usage: tsx bench/experiments/s2-board.ts <rounds> <seconds> <connections> <name=dir> ...
 *   e.g. s2-board.ts 6 3 4 before=/tmp/s2-before after=.
 * S2_PROF=<dir>: every server runs with --cpu-prof into <dir> (summarise with bench/lib/cpuprofile.ts).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { prepareBenchDb } from "../lib/benchDb.js"
import { bundle } from "../lib/bundle.js"
import { BENCH_ENTITY_ID, benchFixture, TENANT_ID } from "../lib/fixture.js"
import { interleavedRounds, printAgainstFirst } from "../lib/interleaved.js"
import { runAutocannon } from "../lib/load.js"
import { killAllSync, memory, pinSelf, type Server, startServer, stopAll, stopServer } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [roundsArg = "6", secondsArg = "3", connectionsArg = "4", ...specs] = process.argv.slice(2)
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const connections = Number(connectionsArg)
const profileDir = process.env.S2_PROF
const tmp = mkdtempSync(join(tmpdir(), "gateway-s2-board-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})

const PATH = `/workspace/tenants/${TENANT_ID}/entities/${BENCH_ENTITY_ID}/board`

const main = async () => {
  pinSelf()
  const fixture = join(tmp, "fixture.json")
  writeFileSync(fixture, JSON.stringify(benchFixture()))
  let port = firstBenchPort()
  const servers: Array<Server> = []
  for (const spec of specs) {
    const [name, dir] = spec.split("=") as [string, string]
    const root = resolve(dir)
    const entry = await bundle(join(root, "src/workspace/server/main.ts"), join(root, "bench/.build/workspace-board"), "workspace")
    const url = `file:${join(tmp, `${name}.db`)}`
    prepareBenchDb(ROOT, url, fixture)
    if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true })
    const prof = profileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${resolve(profileDir)}`, `--cpu-prof-name=${name}.cpuprofile`]
    servers.push(await startServer({
      name,
      port,
      nodeArgs: [...startFlags(root), ...prof, entry],
      env: { HOST: "127.0.0.1", SVC_WORKSPACE_PORT: String(port), SVC_DATABASE_URL: url },
      cwd: root,
      readyPath: "/workspace/openapi.json"
    }))
    port += 2
  }
  const bodies = await Promise.all(servers.map((s) => fetch(`http://127.0.0.1:${s.port}${PATH}`).then((r) => r.text())))
  if (new Set(bodies).size !== 1) console.log("the builds' boards differ")
  const results = await interleavedRounds(servers, rounds, seconds, (s, durationS) =>
    runAutocannon({ url: `http://127.0.0.1:${s.port}${PATH}`, connections, durationS, pid: s.pid }))
  printAgainstFirst(servers, results, {
    rate: "calls/s",
    per: "call",
    nameWidth: 10,
    cpuDigits: 0,
    more: (s) => `RSS after the load ${(memory(s.pid).rss / 1048576).toFixed(1)} MB`
  })
  // SIGTERM lets --cpu-prof write its profile.
  for (const s of servers) await stopServer(s, 10_000)
  await stopAll()
}

main().then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
