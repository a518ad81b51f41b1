/**
 * Starts the real gateway in a child process, on a free loopback port (and its admin listener
 * on another one), and stops it by its pid: from the sources (node + tsx on src/main.ts), or,
 * with `startBuilt`, exactly as `npm start` runs it (dist/main.js with its node flags).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/**
 * The Node the product runs on (package.json's engines): the registry's `node` package in
 * node_modules (24), whatever node runs vitest; this process's own node where it is absent.
 */
export const NODE = (() => {
  const local = fileURLToPath(new URL("../../node_modules/.bin/node", import.meta.url))
  return existsSync(local) ? local : process.execPath
})()

/**
 * Ports for the processes tests start are taken below the kernel's ephemeral range (32768-60999
 * here), not from `listen(0)`: a port released in that range can be handed at once to any other
 * process's `listen(0)` or outgoing connection before the child binds it, and was, twice in six
 * whole runs (a gateway's PORT given out again as its SVC_ADMIN_PORT; a replica's PORT + 1 taken
 * by another test's process). Nothing takes a port here unless asked for that port.
 */
const QUIET_PORTS = { low: 20_000, high: 32_000 }

/**
 * Each vitest worker (VITEST_POOL_ID 1, 2; the global set-up 0) draws from its own third of that
 * range: a port is checked free, released, then bound by the child a few hundred ms later, and
 * the other worker drew the same port in between once (a replica's "port 29990 is already in
 * use", once in five clean-clone runs). Within a process a port is not handed out twice in
 * SPENT_MS.
 */
const SLICES = 3
const SPENT_MS = 120_000
const slice = (() => {
  const id = Number(process.env.VITEST_POOL_ID ?? 0)
  const size = Math.floor((QUIET_PORTS.high - QUIET_PORTS.low) / SLICES)
  const low = QUIET_PORTS.low + ((Number.isInteger(id) ? id : 0) % SLICES) * size
  return { low, high: low + size }
})()
const spent = new Map<number, number>()

const listenOn = (port: number) =>
  new Promise<ReturnType<typeof createServer> | undefined>((resolve) => {
    const server = createServer()
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

/**
 * `count` distinct free loopback ports (`consecutive`: p, p + 1, ...), all held open until each
 * is known, then released.
 */
export const freePorts = async (count: number, consecutive = false): Promise<Array<number>> => {
  const now = Date.now()
  for (const [port, at] of spent) if (now - at > SPENT_MS) spent.delete(port)
  for (let attempt = 0; attempt < 200; attempt++) {
    const span = slice.high - slice.low - count
    const first = slice.low + Math.floor(Math.random() * span)
    const ports = Array.from({ length: count }, (_, i) =>
      consecutive ? first + i : slice.low + Math.floor(Math.random() * span))
    if (new Set(ports).size !== count || ports.some((port) => spent.has(port))) continue
    for (const port of ports) spent.set(port, now)
    const held = await Promise.all(ports.map(listenOn))
    await Promise.all(held.map((server) => server === undefined ? undefined : new Promise((resolve) => server.close(resolve))))
    if (held.every((server) => server !== undefined)) return ports
  }
  throw new Error(`no ${count} free ports on 127.0.0.1 between ${slice.low} and ${slice.high}`)
}

export const freePort = async (): Promise<number> => (await freePorts(1))[0]!

const SCRIPTS = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string; workspace: string } })
  .scripts

/** The built entry `npm start` runs, and the node flags its script gives it (package.json). */
export const BUILT_ENTRY = "dist/main.js"
/** The built entry `npm run workspace` runs (no flags: they are the gateway cell's). */
export const WORKSPACE_ENTRY = (() => {
  const script = SCRIPTS.workspace
  if (!/build-if-stale\.mjs && exec node dist\/workspace\.js$/.test(script)) throw new Error(`npm run workspace no longer builds and runs dist/workspace.js: ${script}`)
  return "dist/workspace.js"
})()
export const NPM_START_NODE_FLAGS: ReadonlyArray<string> = (() => {
  const script = SCRIPTS.start
  const m = /exec node (.*) dist\/main\.js/.exec(script)
  if (m === null) throw new Error(`npm start's script no longer runs dist/main.js: ${script}`)
  return m[1]!.split(/\s+/).filter((f) => f.startsWith("--"))
})()

/**
 * The gateway as `npm start` runs it: dist/main.js (built once per test run by the global
 * set-up, test/console/globalSetup.ts) with npm start's node flags.
 */
export const startBuilt = (env: Record<string, string>, nodeArgs: ReadonlyArray<string> = []) =>
  startService(env, BUILT_ENTRY, "PORT", nodeArgs)

export interface RunningService {
  readonly url: string
  /** The gateway's admin listener (SVC_ADMIN_PORT), when the entry is src/main.ts. */
  readonly adminUrl: string
  readonly pid: number
  readonly output: () => string
  readonly stop: () => Promise<void>
  /** Settles when the process has exited: its exit code (null when a signal ended it) and the signal. */
  readonly exited: Promise<ProcessExit>
  /** Sends `signal` to the process without waiting for it to exit (see `exited`). */
  readonly kill: (signal: NodeJS.Signals) => void
}

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** When it exited (performance.now() of this process). */
  readonly at: number
}

/**
 * Closes this process's keep-alive `fetch` connections to `urls`' origins (Node's global undici
 * agent) when none has a request in flight. A stop sends SIGTERM right after: a drain closes an
 * idle connection only once it has been idle IDLE_LINGER_MS (500 ms, src/http/server/Drain.ts),
 * so the connection the last request left open held every stop that long (325 ms for one idle
 * 200 ms; about 300 stops a run). With a request in flight (an event stream, an upload) nothing
 * is closed: a closed pool would fail every other fetch to that origin with "The client is
 * closed" until that request ended. Node keeps its agent's pools under symbols; if they change,
 * connections stay open and stops only take longer.
 */
export const closeFetchConnections = (...urls: ReadonlyArray<string>) => {
  const agent = (globalThis as Record<symbol, unknown>)[Symbol.for("undici.globalDispatcher.1")] as object | undefined
  if (agent === undefined) return
  const key = Object.getOwnPropertySymbols(agent).find((s) => s.description === "clients")
  const pools = key === undefined ? undefined : (agent as Record<symbol, unknown>)[key]
  if (!(pools instanceof Map)) return
  for (const url of urls) {
    let origin: string
    try {
      origin = new URL(url).origin
    } catch {
      continue
    }
    const pool = (pools.get(origin) as { dispatcher?: unknown } | undefined)?.dispatcher as
      | { readonly stats?: { readonly running: number; readonly pending: number; readonly queued: number }; close?: () => Promise<void> }
      | undefined
    const stats = pool?.stats
    if (stats === undefined || stats.running + stats.pending + stats.queued > 0) continue
    pool?.close?.().catch(() => {})
  }
}

export const startService = async (
  env: Record<string, string>,
  // The built gateway unless a test needs the sources (a module-load recorder): a start from
  // src/main.ts through tsx costs 2.4-3.2 s of CPU against 0.75 s for dist/main.js (measured).
  entry = BUILT_ENTRY,
  portVariable = "PORT",
  /** Node options after tsx's loader (e.g. another --import). */
  nodeArgs: ReadonlyArray<string> = []
): Promise<RunningService> => {
  const [port, spare] = await freePorts(2) as [number, number]
  // Never the default admin port 3001: test processes run side by side. With identity at the
  // edge the gateway runs no admin listener without a token: none, unless the test gives one.
  const identity = env.SVC_ACTOR_HEADER !== undefined || env.SVC_JWT_JWKS !== undefined
  const adminPort = env.SVC_ADMIN_PORT ??
    (identity && env.SVC_ADMIN_TOKEN === undefined && entry !== WORKSPACE_ENTRY ? "off" : String(spare))
  const inherited = { ...process.env }
  for (const name of ["SVC_ADMIN_HOST", "SVC_ADMIN_TOKEN", "SVC_WORKSPACE_TOKEN", "SVC_WORKSPACE_URL"]) delete inherited[name]
  const built = entry === BUILT_ENTRY
  const args = built
    ? [...NPM_START_NODE_FLAGS, ...nodeArgs, entry]
    : entry.endsWith(".js") ? [...nodeArgs, entry] : ["--import", "tsx", ...nodeArgs, entry]
  const child: ChildProcess = spawn(NODE, args, {
    cwd: ROOT,
    env: { ...inherited, HOST: "127.0.0.1", [portVariable]: String(port), ...env, SVC_ADMIN_PORT: adminPort },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<ProcessExit>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, at: performance.now() }))
  )
  // Named by the start-up log below when SVC_ADMIN_PORT=0 picked the port.
  let adminUrl = `http://127.0.0.1:${adminPort}`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      closeFetchConnections(url, adminUrl)
      process.kill(child.pid!, "SIGTERM")
      const timer = setTimeout(() => child.exitCode === null && process.kill(child.pid!, "SIGKILL"), 5000)
      await exited
      clearTimeout(timer)
    }
  }
  // Between probes: until the process writes something (its start-up log says it listens) or
  // `ms` pass, whichever is first; a fixed pause cost each start half a pause on average.
  const outputOr = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer)
        child.stdout!.off("data", done)
        child.stderr!.off("data", done)
        child.off("exit", done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      child.stdout!.on("data", done)
      child.stderr!.on("data", done)
      child.once("exit", done)
    })
  const deadline = Date.now() + 30_000
  const gateway = entry === "src/main.ts" || built
  const probe = gateway ? "/v1/health" : "/workspace/openapi.json"
  const probeHeaders: Record<string, string> = env.SVC_ADMIN_TOKEN !== undefined && !gateway
    ? { authorization: `Bearer ${env.SVC_ADMIN_TOKEN}` }
    : {}
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited with ${child.exitCode}:\n${output}`)
    try {
      const res = await fetch(url + probe, { signal: AbortSignal.timeout(2000), headers: probeHeaders })
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`service did not become healthy:\n${output}`)
    }
    await outputOr(100)
  }
  // The admin listener answering: the start-up log names it (its port, when SVC_ADMIN_PORT=0 picked
  // one); a port chosen here is probed instead, since a log level above info writes no such line
  // (that wait took its whole 10 s then).
  if (gateway && adminPort !== "off" && env.SVC_WORKSPACE_URL === undefined) {
    const until = Date.now() + 10_000
    const answers = () =>
      fetch(`${adminUrl}/workspace/openapi.json`, { signal: AbortSignal.timeout(2000) }).then(() => true, () => false)
    let named: RegExpExecArray | null = null
    while ((named = /admin: +(http:\/\/\S+?)\/workspace /.exec(output)) === null && Date.now() < until) {
      if (adminPort !== "0" && await answers()) break
      await outputOr(50)
    }
    if (named !== null) adminUrl = named[1]!
  }
  const kill = (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, signal)
  }
  return { url, adminUrl, pid: child.pid!, output: () => output, stop, exited, kill }
}

/**
 * The exit of `service` after a SIGTERM, within `ms`; else fails, quoting the end of its output.
 */
export const exitWithin = async (service: RunningService, ms: number): Promise<ProcessExit> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no exit within ${ms} ms of SIGTERM:\n${service.output().slice(-2000)}`)), ms)
  })
  try {
    return await Promise.race([service.exited, timeout])
  } finally {
    clearTimeout(timer)
  }
}

export interface JsonResponse {
  readonly status: number
  /** The parsed JSON; the text itself when it is not JSON; undefined when empty. */
  readonly body: any
  readonly headers: Headers
  /** The body exactly as received. */
  readonly text: string
}

export const http = async (
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {}
): Promise<JsonResponse> => {
  const res = await fetch(url, {
    method,
    headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  // An event stream does not end: its status and headers are the answer.
  if ((res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    await res.body?.cancel()
    return { status: res.status, body: undefined, headers: res.headers, text: "" }
  }
  const text = await res.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = text
  }
  return { status: res.status, body: parsed as any, headers: res.headers, text }
}

/**
 * Settles starts made together (a gateway and a browser, say) and then throws the first failure:
 * with `Promise.all`, a browser that failed to launch left the gateway started beside it unassigned,
 * so no `afterAll` stopped it and it outlived the run. Each start assigns its result as it settles.
 */
export const allStarted = async (starts: ReadonlyArray<Promise<unknown>>): Promise<void> => {
  const settled = await Promise.allSettled(starts)
  for (const result of settled) if (result.status === "rejected") throw result.reason
}
