/**
 * S1 (GET /v1/health, 10 keep-alive connections) against builds of the gateway as `npm start`
 * runs them (`<dir>/dist/main.js` with npm start's node flags, default settings, each on its own
 * fresh database; stdout a pipe, as under a supervisor), plus optional other servers, interleaved
 * A B .. then .. B A (the order reverses every round: the bench saw a position effect), 0.5 s idle
 * before each measurement. Prints, per server, the median requests/s and CPU per request (from
 * /proc), and each server's ratio to the first.
 *
 * Usage: tsx bench/experiments/s1-shipped.ts <rounds> <seconds> <name=dir|name=tsx:file|name=raw> ...
 *   e.g. s1-shipped.ts 6 3 before=/tmp/s1-before after=. floor=tsx:bench/experiments/s1-floor.ts
 * S1_ENV_<name>="K=V K=V" adds settings to that server (e.g. S1_ENV_after="SVC_LOG_LEVEL=warning");
 * S1_FLAGS_<name>="--flag ..." adds node flags to npm start's for it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { interleavedRounds, printAgainstFirst } from "../lib/interleaved.js"
import { runAutocannon } from "../lib/load.js"
import { killAllSync, pinSelf, type Server, startServer, stopAll } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"
import { firstBenchPort } from "../lib/ports.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [roundsArg = "6", secondsArg = "3", ...specs] = process.argv.slice(2)
const rounds = Number(roundsArg)
const seconds = Number(secondsArg)
const tmp = mkdtempSync(join(tmpdir(), "gateway-s1-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})

const envOf = (name: string): Record<string, string> =>
  Object.fromEntries((process.env[`S1_ENV_${name}`] ?? "").split(" ").filter((kv) => kv.includes("=")).map((kv) => {
    const i = kv.indexOf("=")
    return [kv.slice(0, i), kv.slice(i + 1)]
  }))

const main = async () => {
  pinSelf()
  let port = firstBenchPort()
  const servers: Array<Server> = []
  for (const spec of specs) {
    const [name, target] = spec.split("=") as [string, string]
    const env = { SVC_ADMIN_PORT: String(port + 1), SVC_DATABASE_URL: `file:${join(tmp, `${name}.db`)}`, ...envOf(name) }
    const nodeArgs = target === "raw"
      ? ["--import", "tsx", "bench/experiments/s1-floor.ts"]
      : target.startsWith("tsx:")
      ? ["--import", "tsx", target.slice(4)]
      : [...startFlags(resolve(target)), ...(process.env[`S1_FLAGS_${name}`] ?? "").split(" ").filter((f) => f !== ""), join(resolve(target), "dist/main.js")]
    servers.push(await startServer({ name, port, nodeArgs, env: target === "raw" ? { VARIANT: "raw" } : env, cwd: ROOT }))
    port += 2
  }
  const results = await interleavedRounds(servers, rounds, seconds, (s, durationS) =>
    runAutocannon({ url: `http://127.0.0.1:${s.port}/v1/health`, connections: 10, durationS, pid: s.pid }), 2)
  printAgainstFirst(servers, results, { rate: "req/s", per: "req", nameWidth: 12, cpuDigits: 1 })
  await stopAll()
}

main().then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
