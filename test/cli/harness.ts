/**
 * Runs the CLI as a user would: the `svc` bin (src/cli/bin.mjs, the bundled dist/cli.cjs) in a
 * child process, against the built gateway (dist/main.js, as `npm start` runs it) on a temporary
 * database and this directory's fixture, on a free port. Both are built once per run by the
 * global set-up; through tsx each CLI run cost 2.1 s of CPU against 0.35 s, each gateway start
 * 2.4-3.2 s against 0.75 s (measured on 2 cores).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { BUILT_ENTRY, closeFetchConnections, freePorts, NPM_START_NODE_FLAGS } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

export const ROOT = fileURLToPath(new URL("../../", import.meta.url))
export const FIXTURE = fileURLToPath(new URL("./fixture.json", import.meta.url))
const CLI_MAIN = path.join(ROOT, "src/cli/main.ts")
const CLI_BIN = path.join(ROOT, "src/cli/bin.mjs")
const GATEWAY_MAIN = path.join(ROOT, BUILT_ENTRY)
/** What `--import tsx` resolves to, by absolute URL, so the CLI can run from any working directory. */
export const TSX = pathToFileURL(path.join(ROOT, "node_modules/tsx/dist/loader.mjs")).href

/** Settings that would change what the processes do if inherited from the developer's shell. */
const SCRUB = [
  "SVC_URL",
  "SVC_WORKSPACE_URL",
  "SVC_WORKSPACE_TOKEN",
  "SVC_INTERNAL_EVENTS_KEY",
  "SVC_TENANT_SLUG",
  "SVC_SEED_FILE",
  "SVC_DATABASE_URL",
  "SVC_ADMIN_URL",
  "SVC_ADMIN_HOST",
  "SVC_ADMIN_PORT",
  "SVC_ADMIN_TOKEN",
  "PORT",
  "HOST"
]

const cleanEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const k of SCRUB) delete env[k]
  return { ...env, NO_COLOR: "1", ...extra }
}


export interface Gateway {
  readonly url: string
  readonly port: number
  /** The admin listener (agent registry, the whole workspace API), on a port of its own. */
  readonly adminUrl: string
  /** The admin listener's bearer token (SVC_ADMIN_TOKEN). */
  readonly adminToken: string
  readonly dir: string
  /** Directory the gateway's `local` ingest provider is confined to. */
  readonly ingestRoot: string
  readonly log: () => string
  readonly stop: () => Promise<void>
}

/** Every process started here (gateways, CLI runs), so none outlives the test file. */
const started = new Set<ChildProcess>()

const kill = (child: ChildProcess, signal: NodeJS.Signals) => {
  if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(child.pid, signal)
    } catch {
      // already gone
    }
  }
}

/** Kills (by pid) the processes started here that are still running; for afterAll. */
export const stopAllProcesses = () => {
  for (const child of started) kill(child, "SIGKILL")
  started.clear()
}

// A worker that exits without running afterAll (a hook timeout, a crash) still takes them down.
process.once("exit", stopAllProcesses)

export const startGateway = async (): Promise<Gateway> => {
  const dir = mkdtempSync(path.join(tmpdir(), "svc-cli-"))
  const ingestRoot = path.join(dir, "ingest")
  const [port, adminPort] = await freePorts(2) as [number, number]
  const adminToken = randomBytes(24).toString("base64url")
  const url = `http://127.0.0.1:${port}`
  const adminUrl = `http://127.0.0.1:${adminPort}`
  let output = ""
  const child: ChildProcess = spawn(process.execPath, [...NPM_START_NODE_FLAGS, GATEWAY_MAIN], {
    cwd: ROOT,
    env: cleanEnv({
      PORT: String(port),
      HOST: "127.0.0.1",
      SVC_DATABASE_URL: pathToFileURL(path.join(dir, "workspace.db")).href,
      SVC_SEED_FILE: FIXTURE,
      SVC_TENANT_SLUG: "acme",
      SVC_ADMIN_PORT: String(adminPort),
      SVC_ADMIN_TOKEN: adminToken,
      SVC_LOCAL_INGEST_ROOT: ingestRoot,
      SVC_INGEST_URL_ALLOW: `127.0.0.1:${port}`
    }),
    stdio: ["ignore", "pipe", "pipe"]
  })
  started.add(child)
  child.stdout!.on("data", (b) => (output += b))
  child.stderr!.on("data", (b) => (output += b))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      closeFetchConnections(url, adminUrl)
      kill(child, "SIGTERM")
      const timer = setTimeout(() => kill(child, "SIGKILL"), 5000)
      await exited
      clearTimeout(timer)
    }
    started.delete(child)
    rmSync(dir, { recursive: true, force: true })
  }

  const deadline = Date.now() + 25_000
  while (true) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}:\n${output}`)
    try {
      const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(1000) })
      if (res.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`gateway did not answer /v1/health within 25 s:\n${output}`)
    }
    await new Promise((r) => setTimeout(r, 150))
  }
  return { url, port, adminUrl, adminToken, dir, ingestRoot, log: () => output, stop }
}

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface SvcOptions {
  readonly cwd?: string
  readonly env?: Record<string, string>
  /** Run the sources through `node --import tsx src/cli/main.ts` instead of the `svc` bin. */
  readonly fromSource?: boolean
}

/** A running CLI process: its output so far, and its end. */
export interface Running {
  readonly stdout: () => string
  readonly stderr: () => string
  readonly done: Promise<Run>
  readonly pid: number | undefined
}

export const spawnSvc = (args: ReadonlyArray<string>, options: SvcOptions = {}): Running => {
  const argv = options.fromSource === true ? ["--import", TSX, CLI_MAIN, ...args] : [CLI_BIN, ...args]
  const child = spawn(process.execPath, argv, {
    cwd: options.cwd ?? tmpdir(),
    env: cleanEnv(options.env ?? {}),
    stdio: ["ignore", "pipe", "pipe"]
  })
  started.add(child)
  child.once("close", () => started.delete(child))
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (b) => (stdout += b))
  child.stderr.on("data", (b) => (stderr += b))
  const done = new Promise<Run>((resolve, reject) => {
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })
  return { stdout: () => stdout, stderr: () => stderr, done, pid: child.pid }
}

/** Runs `svc ...args` to its end. */
export const svc = (args: ReadonlyArray<string>, options: SvcOptions = {}): Promise<Run> => spawnSvc(args, options).done

/** Waits until `check` holds, polling. */
export const eventually = async (check: () => boolean, timeoutMs = 10_000, what?: string): Promise<void> => {
  await waitFor(what ?? check, check, { timeoutMs, everyMs: 50 })
}
