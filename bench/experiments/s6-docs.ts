/**
 * S6 before/after of the lazy /docs and /openapi.json in src/gateway/Gateway.ts: bundles an entry
 * twice, once as it is and once with Gateway.ts as committed (`git show HEAD:src/gateway/Gateway.ts`,
 * eager HttpApiScalar.layer and middlewareOpenApi), then alternates starts of the two and
 * reports start-to-healthy and RSS after 1 s idle (medians), and that /docs and /openapi.json
 * still answer.
 *
 * With src/main.ts the embedded workspace's own /workspace/docs and /workspace/openapi.json are
 * checked too (lazy as well since: src/workspace/server/server.ts uses the same lazyRoutes).
 *
 * Usage: tsx bench/experiments/s6-docs.ts [entry] [starts]
 *   entry: bench/servers/gateway.ts (default; in-memory workspace) or src/main.ts
 */
import { build, type Plugin } from "esbuild"
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { benchFixture } from "../lib/fixture.js"
import { median } from "../lib/load.js"
import { getStatus, killAllSync, memory, pinSelf, startServer, stopServer } from "../lib/proc.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const [entry = "bench/servers/gateway.ts", startsArg = "5"] = process.argv.slice(2)
const starts = Number(startsArg)
const tmp = mkdtempSync(join(tmpdir(), "gateway-s6-"))
process.on("exit", () => {
  killAllSync()
  rmSync(tmp, { recursive: true, force: true })
})

const committedGateway = execFileSync("git", ["show", "HEAD:src/gateway/Gateway.ts"], { cwd: ROOT, encoding: "utf8" })
const gatewayFile = join(ROOT, "src/gateway/Gateway.ts")

/** Serves the committed Gateway.ts in place of the working copy (same directory, same imports). */
const committed: Plugin = {
  name: "committed-gateway",
  setup(b) {
    b.onLoad({ filter: /src\/gateway\/Gateway\.ts$/ }, (args) =>
      args.path === gatewayFile ? { contents: committedGateway, loader: "ts", resolveDir: join(ROOT, "src/gateway") } : undefined)
  }
}

const bundleAs = async (name: string, plugins: Array<Plugin>) => {
  await build({
    entryPoints: { [name]: join(ROOT, entry) },
    // Two levels below the repository, like bench/run.ts's bundles: src/ resolves files relative to
    // its own location (e.g. the demo fixture, three directories up from src/workspace/embedded).
    outdir: join(ROOT, "bench/.build", `s6-${name}`),
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    external: ["libsql", "@libsql/linux-*", "bufferutil", "utf-8-validate"],
    logLevel: "error",
    plugins,
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" }
  })
  return join(ROOT, "bench/.build", `s6-${name}`, `${name}.mjs`)
}

const main = async () => {
  pinSelf()
  const fixture = join(tmp, "fixture.json")
  writeFileSync(fixture, JSON.stringify(benchFixture()))
  const variants = [
    { name: "before", file: await bundleAs("before", [committed]) },
    { name: "after", file: await bundleAs("after", []) }
  ]
  const env = { BENCH_WORKSPACE: "memory", BENCH_FIXTURE: fixture, HOST: "127.0.0.1", SVC_DATABASE_URL: `file:${join(tmp, "s6.db")}` }
  let port = 45_000 + Math.floor(Math.random() * 5000)
  const results = new Map(variants.map((v) => [v.name, [] as Array<{ startMs: number; rss: number }>]))
  for (let i = 0; i <= starts; i++) {
    for (const v of variants) {
      const s = await startServer({ name: v.name, port: port++, nodeArgs: [v.file], env, cwd: ROOT })
      await sleep(1000)
      const rss = memory(s.pid).rss
      if (i === starts) {
        // Last round: both pages still answer (after the measurement, so loading them is not counted).
        const paths = ["/docs", "/openapi.json", ...(entry === "src/main.ts" ? ["/workspace/docs", "/workspace/openapi.json"] : [])]
        const statuses = await Promise.all(paths.map(async (p) => `${p} ${await getStatus(s.port, p, 10_000)}`))
        const after = memory(s.pid).rss
        console.log(`${v.name}: ${statuses.join(", ")}; RSS after serving them ${(after / 2 ** 20).toFixed(1)} MB`)
      }
      await stopServer(s)
      if (i > 0) results.get(v.name)!.push({ startMs: s.startMs, rss }) // the first start warms the disk cache
    }
  }
  console.log(`${entry}, ${starts} alternating starts each (bundled), medians:`)
  const base = results.get("before")!
  for (const [name, xs] of results) {
    const rss = median(xs.map((x) => x.rss)) / 2 ** 20
    const start = median(xs.map((x) => x.startMs))
    console.log(
      `${name.padEnd(7)} RSS ${rss.toFixed(1)} MB (${(rss / (median(base.map((x) => x.rss)) / 2 ** 20)).toFixed(2)}x), ` +
        `start ${start.toFixed(0)} ms (${(start / median(base.map((x) => x.startMs))).toFixed(2)}x)`
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
