/**
 * The process: `npm start` serves from the built entry (dist/main.js, built when
 * stale), finds its assets wherever the build is put, stops with npm on SIGTERM (no orphan),
 * and start-up failures name their cause.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { runBuild } from "../../scripts/build.mjs"
import { staleness } from "../../scripts/build-if-stale.mjs"
import { BUILT_ENTRY, freePort, NPM_START_NODE_FLAGS } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const dir = mkdtempSync(join(tmpdir(), "gateway-ops-"))
const children = new Set<ChildProcess>()
const cleanup: Array<() => void> = [() => rmSync(dir, { recursive: true, force: true })]

const SCRUB = ["SVC_WORKSPACE_URL", "SVC_TENANT_SLUG", "SVC_SEED_FILE", "SVC_ADMIN_HOST", "SVC_ADMIN_TOKEN", "SVC_LOG_LEVEL", "SVC_LOG_FORMAT"]
const env = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env }
  for (const k of SCRUB) delete e[k]
  return { ...e, HOST: "127.0.0.1", SVC_ADMIN_PORT: "0", SVC_DATABASE_URL: `file:${join(dir, `${Math.random()}.db`)}`, ...extra }
}

const run = (command: string, args: ReadonlyArray<string>, extra: Record<string, string>) => {
  const child = spawn(command, args, { cwd: ROOT, env: env(extra), stdio: ["ignore", "pipe", "pipe"] })
  children.add(child)
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, output: () => output, exited }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The process npm's script runs (the script execs node, so it is npm's child), killed by its pid
 * whatever fails later: killing npm leaves its child running (one outlived a failed run).
 */
const scriptProcess = (npm: { child: ChildProcess }) => {
  const pid = Number(readFileSync(`/proc/${npm.child.pid}/task/${npm.child.pid}/children`, "utf8").trim().split(/\s+/)[0])
  cleanup.push(() => {
    if (alive(pid)) process.kill(pid, "SIGKILL")
  })
  return pid
}

const waitHealthy = async (port: number, proc: { output: () => string; child: ChildProcess }, timeoutMs = 60_000, path = "/v1/health") => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`exited ${proc.child.exitCode}:\n${proc.output()}`)
    try {
      const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(1000) })
      if (res.ok) return
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`not healthy:\n${proc.output()}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

afterAll(() => {
  for (const c of children) if (c.pid !== undefined && c.exitCode === null && c.signalCode === null) process.kill(c.pid, "SIGKILL")
  for (const f of cleanup) f()
})

describe("npm start", { timeout: 120_000 }, () => {
  it("serves from dist/main.js with the demo data, and SIGTERM to npm stops the server too", async () => {
    const port = await freePort()
    const npm = run("npm", ["start"], { PORT: String(port), SVC_LOG_FORMAT: "json" })
    await waitHealthy(port, npm, 90_000)
    // npm's child is node itself, running the built entry.
    const serverPid = scriptProcess(npm)
    expect(readFileSync(`/proc/${serverPid}/cmdline`, "utf8").split("\0")).toContain("dist/main.js")
    // On the pinned Node 24 (node_modules/.bin/node, first on npm's PATH), whatever the machine's node is.
    expect(readlinkSync(`/proc/${serverPid}/exe`)).toBe(realpathSync(join(ROOT, "node_modules", ".bin", "node")))
    const entities = await (await fetch(`http://127.0.0.1:${port}/v1/entities`)).json() as Array<{ slug: string }>
    expect(entities.map((e) => e.slug)).toContain("acme-us")
    // One JSON line per request, with its id.
    const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: { "x-request-id": "npm-start-check" } })
    await res.text()
    // The line is written once the answer has gone (200 ms was not always enough on a loaded machine).
    const logged = /\{"time":"[^"]+","level":"info","msg":"request","requestId":"npm-start-check"/
    await waitFor("the request's log line", () => logged.test(npm.output()), { timeoutMs: 10_000, everyMs: 50 }).catch(() => {})
    expect(npm.output()).toMatch(logged)

    process.kill(npm.child.pid!, "SIGTERM")
    await waitFor(`the server (pid ${serverPid}) to exit after npm's SIGTERM`, () => !alive(serverPid), { timeoutMs: 15_000, everyMs: 50 })
    expect(alive(serverPid)).toBe(false)
    await npm.exited
  })

  it("npm run workspace serves the workspace service from its bundle (dist/workspace.js), not the sources", async () => {
    const port = await freePort()
    const npm = run("npm", ["run", "workspace"], { SVC_WORKSPACE_PORT: String(port) })
    await waitHealthy(port, npm, 90_000, "/workspace/openapi.json")
    const serverPid = scriptProcess(npm)
    // Through tsx a start cost 1.8-2.0 s of CPU and 170-190 MB; the bundle 0.6 s and 97 MB.
    expect(readFileSync(`/proc/${serverPid}/cmdline`, "utf8").split("\0").filter((a) => a !== "").slice(1)).toEqual(["dist/workspace.js"])
    const tenants = await (await fetch(`http://127.0.0.1:${port}/workspace/tenants/by-slug/acme`)).json() as { slug?: string }
    expect(tenants.slug).toBe("acme")
    process.kill(npm.child.pid!, "SIGTERM")
    await waitFor(`the workspace service (pid ${serverPid}) to exit after npm's SIGTERM`, () => !alive(serverPid), { timeoutMs: 15_000, everyMs: 50 })
    await npm.exited
  })

  it("counts the assets the bundles read: an edited demo fixture, or its copy gone, makes dist/ stale", () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, "dist", "build.json"), "utf8")) as { inputs: Array<string>; outputs: Array<string> }
    // npm start and npm run workspace read fixtures/demo.json's copy in dist/assets, so an edit
    // to the fixture must rebuild: esbuild's metafile does not list it.
    expect(manifest.inputs).toContain("fixtures/demo.json")
    expect(manifest.outputs).toContain("assets/demo.json")
    // dist/ as built, but for that copy: stale, and saying why.
    const scratch = mkdtempSync(join(tmpdir(), "stale-dist-"))
    cleanup.push(() => rmSync(scratch, { recursive: true, force: true }))
    for (const name of readdirSync(join(ROOT, "dist"))) {
      if (name !== "assets" && name !== "build.json") symlinkSync(join(ROOT, "dist", name), join(scratch, name))
    }
    mkdirSync(join(scratch, "assets"))
    for (const name of readdirSync(join(ROOT, "dist", "assets"))) {
      if (name !== "demo.json") symlinkSync(join(ROOT, "dist", "assets", name), join(scratch, "assets", name))
    }
    writeFileSync(join(scratch, "build.json"), JSON.stringify(manifest))
    expect(staleness(ROOT, scratch)).toBe("dist/assets/demo.json is missing")
    symlinkSync(join(ROOT, "dist", "assets", "demo.json"), join(scratch, "assets", "demo.json"))
    expect(staleness(ROOT, scratch)).toBeUndefined()
  })

  it("finds its assets wherever the build puts the entry", async () => {
    const out = join(ROOT, "scratch", `ops-build-${process.pid}`, "deeper", "still")
    cleanup.push(() => rmSync(join(ROOT, "scratch", `ops-build-${process.pid}`), { recursive: true, force: true }))
    // The typed client package is no part of what this proves, and its declarations (tsc) were
    // most of this build's time: the run's own, fresh (the global set-up built dist/), is copied
    // in first, so the build finds it up to date and builds the gateway and the console only.
    cpSync(join(ROOT, "dist", "client"), join(out, "client"), { recursive: true, preserveTimestamps: true })
    await runBuild(out)
    const port = await freePort()
    const gw = run(process.execPath, [join(out, "main.js")], { PORT: String(port) })
    await waitHealthy(port, gw)
    expect(gw.output()).toContain(join(out, "assets", "demo.json"))
    const entities = await (await fetch(`http://127.0.0.1:${port}/v1/entities`)).json() as Array<unknown>
    expect(entities.length).toBeGreaterThan(0)
    process.kill(gw.child.pid!, "SIGTERM")
    await gw.exited
  })
})

describe("start-up failures name their cause", { timeout: 120_000 }, () => {
  const fails = async (extra: Record<string, string>) => {
    // The built entry with npm start's flags (what users run); from the sources through tsx each
    // of these cost 2.4-3.2 s of CPU more.
    const p = run(process.execPath, [...NPM_START_NODE_FLAGS, BUILT_ENTRY], extra)
    const code = await p.exited
    return { code, output: p.output() }
  }
  let holder: Server | undefined
  afterAll(() => holder?.close())

  it("a port in use, an unresolvable HOST, bad settings", async () => {
    holder = createServer()
    const busy = await new Promise<number>((resolve) => holder!.listen(0, "127.0.0.1", () => resolve((holder!.address() as { port: number }).port)))
    const [inUse, host, body, url, hugeBody, connections] = await Promise.all([
      fails({ PORT: String(busy) }),
      fails({ PORT: String(await freePort()), HOST: "no-such-host.invalid" }),
      fails({ SVC_MAX_BODY_BYTES: "abc" }),
      fails({ SVC_PUBLIC_URL: "garbage" }),
      // Past their upper bounds (src/config/settings.ts says why each figure).
      fails({ SVC_MAX_BODY_BYTES: "1000000000" }),
      fails({ SVC_WORKSPACE_MAX_CONNECTIONS: "1000000000" })
    ])
    expect(inUse.code).toBe(1)
    expect(inUse.output).toContain(`Cannot start: port ${busy} on 127.0.0.1 is already in use (PORT, HOST)`)
    expect(host.code).toBe(1)
    expect(host.output).toMatch(/Cannot start: HOST=\\?"no-such-host\.invalid\\?" does not resolve to an address \((ENOTFOUND|EAI_AGAIN)/)
    expect(body.code).toBe(1)
    expect(body.output).toMatch(/Cannot start: SVC_MAX_BODY_BYTES=\\?"abc\\?": expected an integer from 1 to 535822336/)
    expect(url.code).toBe(1)
    expect(url.output).toMatch(/Cannot start: SVC_PUBLIC_URL=\\?"garbage\\?": expected an http or https URL with a host/)
    expect(hugeBody.code).toBe(1)
    expect(hugeBody.output).toMatch(/Cannot start: SVC_MAX_BODY_BYTES=\\?"1000000000\\?": expected an integer from 1 to 535822336/)
    expect(connections.code).toBe(1)
    expect(connections.output).toMatch(/Cannot start: SVC_WORKSPACE_MAX_CONNECTIONS=\\?"1000000000\\?": expected an integer from 3 to 4096/)
  })
})
