/**
 * The built gateway (dist/main.js with npm start's node flags, as test/support/process.ts's
 * startBuilt runs it) in a child process whose exit is the point: a start that must fail, or a
 * start in a chosen working directory (`entry`: another bundle, such as the workspace service's).
 * Unlike startBuilt, nothing is added to the environment (no PORT, no SVC_ADMIN_PORT): the test
 * says exactly what the operator sets.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createServer, type Server } from "node:net"
import { fileURLToPath } from "node:url"
import { BUILT_ENTRY, freePorts, NPM_START_NODE_FLAGS } from "../support/process.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** Settings a developer's shell may hold that would change what the test means. */
const inheritedEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith("SVC_") || name.startsWith("OTEL_") || name === "PORT" || name === "HOST") continue
    env[name] = value
  }
  return env
}

export interface BuiltRun {
  readonly child: ChildProcess
  readonly output: () => string
  /** Exit code (null: killed by a signal) and how long after spawn it came. */
  readonly exited: Promise<{ readonly code: number | null; readonly afterMs: number }>
  /** Kills it (SIGKILL) if it is still running. */
  readonly kill: () => void
}

const running = new Set<ChildProcess>()

export const spawnBuilt = (
  env: Record<string, string>,
  options: { readonly cwd?: string; readonly entry?: string } = {}
): BuiltRun => {
  const started = performance.now()
  const child = spawn(process.execPath, [...NPM_START_NODE_FLAGS, `${ROOT}${options.entry ?? BUILT_ENTRY}`], {
    cwd: options.cwd ?? ROOT,
    env: { ...inheritedEnv(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.add(child)
  let output = ""
  child.stdout!.on("data", (d) => (output += d))
  child.stderr!.on("data", (d) => (output += d))
  const exited = new Promise<{ code: number | null; afterMs: number }>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child)
      resolve({ code, afterMs: performance.now() - started })
    })
  )
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  return { child, output: () => output, exited, kill }
}

/** Kills every child still running (afterAll). */
export const killAllBuilt = () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
}

/**
 * Runs the built gateway with `env` until it exits, at most `limitMs` (then it is killed and
 * `code` is "still running").
 */
export const runUntilExit = async (env: Record<string, string>, limitMs = 15_000) => {
  const run = spawnBuilt(env)
  const timer = setTimeout(run.kill, limitMs)
  const { code, afterMs } = await run.exited
  clearTimeout(timer)
  return { code: afterMs >= limitMs ? "still running" as const : code, afterMs, output: run.output() }
}

/** A loopback port held by another server (as another process would), until `close`. */
export const holdPort = async (): Promise<{ readonly port: number; readonly close: () => Promise<void> }> => {
  const server: Server = createServer()
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
  })
  return { port, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

/** Two consecutive free loopback ports (a PORT and the PORT + 1 its admin listener takes by default). */
export const freePortPair = async (): Promise<number> => (await freePorts(2, true))[0]!
