/**
 * S2's upstream, as bench/run.ts measures it and bench/profile.ts profiles it: the workspace
 * service (`npm run workspace`, bundled, under npm start's node flags) and in front of it the
 * proxy that holds each next-step lookup LOOKUP_MS (bench/servers/slowUpstream.ts), both on the
 * load generator's core. The gateway under test reads the proxy's URL as SVC_WORKSPACE_URL.
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { bundle } from "./bundle.js"
import { LOOKUP_MS } from "./fixture.js"
import { LOAD_CORE, type Server, startServer } from "./proc.js"
import { startFlags } from "./startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

export const startSlowUpstream = async (
  nextPort: () => number,
  dbUrl: string
): Promise<{ readonly workspace: Server; readonly proxy: Server; readonly url: string }> => {
  const entry = await bundle(join(ROOT, "src/workspace/server/main.ts"), join(ROOT, "bench/.build/workspace"), "workspace")
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
