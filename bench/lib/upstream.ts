/**
 * S2's upstream, as bench/run.ts measures it and bench/profile.ts profiles it: the workspace
 * service as `npm run workspace` runs it (dist/workspace.js, built when stale; under npm start's
 * node flags) and in front of it the proxy that holds each next-step lookup LOOKUP_MS
 * (bench/servers/slowUpstream.ts), both on the load generator's core. The gateway under test reads the proxy's URL as SVC_WORKSPACE_URL.
 */
import { execFileSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { prepareBenchDb } from "./benchDb.js"
import { benchFixture, LOOKUP_MS } from "./fixture.js"
import { LOAD_CORE, type Server, startServer } from "./proc.js"
import { startFlags } from "./startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export const startSlowUpstream = async (
  nextPort: () => number,
  dbUrl: string
): Promise<{ readonly workspace: Server; readonly proxy: Server; readonly url: string }> => {
  execFileSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: ROOT, stdio: "inherit" })
  const entry = join(ROOT, "dist/workspace.js")
  const wsPort = nextPort()
  const workspace = await startServer({
    name: "workspace",
    port: wsPort,
    nodeArgs: [...startFlags(ROOT), entry],
    env: { HOST: "127.0.0.1", SVC_WORKSPACE_PORT: String(wsPort), SVC_DATABASE_URL: dbUrl },
    cwd: ROOT,
    core: LOAD_CORE,
    readyPath: "/workspace/openapi.json"
  })
  const proxy = await startServer({
    name: "slow-upstream",
    port: nextPort(),
    nodeArgs: ["--import", "tsx", "bench/servers/slowUpstream.ts"],
    env: { BENCH_UPSTREAM_URL: `http://127.0.0.1:${workspace.port}`, BENCH_LOOKUP_MS: String(LOOKUP_MS) },
    cwd: ROOT,
    core: LOAD_CORE,
    readyPath: "/workspace/openapi.json"
  })
  return { workspace, proxy, url: `http://127.0.0.1:${proxy.port}` }
}

/**
 * The experiments' S2 (bench/experiments/s2-*.ts): the bench fixture's database in `dir`, the
 * slow upstream on it, and the shipped build (GATEWAY_ENTRY, else dist/main.js, under npm
 * start's flags) reading it, as bench/run.ts's gateway-s2. `nodeArgs`: flags before the entry.
 */
export const startS2World = async (dir: string, nextPort: () => number, nodeArgs: ReadonlyArray<string> = []) => {
  const fixture = join(dir, "fixture.json")
  writeFileSync(fixture, JSON.stringify(benchFixture()))
  prepareBenchDb(ROOT, `file:${join(dir, "upstream.db")}`, fixture)
  const upstream = await startSlowUpstream(nextPort, `file:${join(dir, "upstream.db")}`)
  const gateway = await startServer({
    name: "gateway",
    port: nextPort(),
    nodeArgs: [...nodeArgs, ...startFlags(ROOT), process.env.GATEWAY_ENTRY ?? "dist/main.js"],
    env: { HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_WORKSPACE_URL: upstream.url, SVC_TENANT_SLUG: "acme" },
    cwd: ROOT
  })
  return { ...upstream, gateway }
}
