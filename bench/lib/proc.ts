/**
 * Server processes: started pinned to the server core, waited for until /v1/health answers,
 * measured through /proc (CPU time, RSS), and always killed by pid, also when the run fails.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as http from "node:http"
import { type AddressInfo, createServer } from "node:net"
import { setTimeout as sleep } from "node:timers/promises"

/** A loopback port nobody listens on now (the machine is shared: a fixed range collides). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })

export const SERVER_CORE = 1
export const LOAD_CORE = 0

const hasTaskset = (() => {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Pins this process (the load generator) to LOAD_CORE, when taskset exists. */
export const pinSelf = (): boolean => {
  if (!hasTaskset) return false
  execFileSync("taskset", ["-cp", String(LOAD_CORE), String(process.pid)], { stdio: "ignore" })
  return true
}

export interface Server {
  readonly name: string
  readonly port: number
  readonly pid: number
  readonly child: ChildProcess
  /** Milliseconds from spawn to the first 200 from /v1/health. */
  readonly startMs: number
  readonly output: () => string
}

const running = new Set<Server>()

export interface StartOptions {
  readonly name: string
  readonly port: number
  /** Arguments after `node` (e.g. ["--import", "tsx", "bench/peers/raw.ts"]). */
  readonly nodeArgs: ReadonlyArray<string>
  readonly env?: Record<string, string>
  readonly cwd?: string
  readonly timeoutMs?: number
  readonly pin?: boolean
  /** The core to pin to (SERVER_CORE; LOAD_CORE for helpers that are not measured). */
  readonly core?: number
  /** Ready when this path answers 200 (servers without /v1/health: the workspace service). */
  readonly readyPath?: string
}

/** One GET; resolves with the status (0 when the connection fails). */
export const getStatus = (port: number, path = "/v1/health", timeoutMs = 1000): Promise<number> =>
  new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path, agent: false, timeout: timeoutMs }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(0))
  })

export const startServer = async (options: StartOptions): Promise<Server> => {
  const args = [...options.nodeArgs]
  const pinned = (options.pin ?? true) && hasTaskset
  const started = performance.now()
  const child = pinned
    ? spawn("taskset", ["-c", String(options.core ?? SERVER_CORE), process.execPath, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...options.env, PORT: String(options.port) },
      stdio: ["ignore", "pipe", "pipe"]
    })
    : spawn(process.execPath, args, {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...options.env, PORT: String(options.port) },
      stdio: ["ignore", "pipe", "pipe"]
    })
  // taskset execs node in place: the child's pid is the server's pid.
  let log = ""
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString("utf8")).slice(-20_000)
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  const server: Server = { name: options.name, port: options.port, pid: child.pid!, child, startMs: NaN, output: () => log }
  running.add(server)
  const deadline = started + (options.timeoutMs ?? 60_000)
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(server)
      throw new Error(`${options.name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${log}`)
    }
    if ((await getStatus(options.port, options.readyPath ?? "/v1/health", 500)) === 200) {
      return { ...server, startMs: performance.now() - started }
    }
    await sleep(5)
  }
  await stopServer(server)
  throw new Error(`${options.name} did not answer ${options.readyPath ?? "/v1/health"} within ${options.timeoutMs ?? 60_000} ms:\n${log}`)
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export const stopServer = async (server: Pick<Server, "pid" | "child">, graceMs = 3000): Promise<void> => {
  for (const s of running) if (s.pid === server.pid) running.delete(s)
  const { child } = server
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  try {
    process.kill(server.pid, "SIGTERM")
  } catch {
    return
  }
  const timer = setTimeout(() => {
    try {
      process.kill(server.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }, graceMs)
  await exited
  clearTimeout(timer)
}

export const stopAll = async (): Promise<void> => {
  await Promise.all([...running].map((s) => stopServer(s)))
}

/** Last resort on a crash of the runner: SIGKILL every server still running, by pid. */
export const killAllSync = (): void => {
  for (const s of running) {
    try {
      process.kill(s.pid, "SIGKILL")
    } catch {
      // already gone
    }
  }
  running.clear()
}

const CLOCK_TICK_MS = 1000 / 100 // USER_HZ is 100 on Linux

/**
 * The fields of a /proc `stat` file after the command name (field 3, `state`, is [0]), or
 * undefined when the process or thread is gone. `path`: /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat.
 */
export const statFields = (path: string): Array<string> | undefined => {
  let stat: string
  try {
    stat = readFileSync(path, "utf8")
  } catch {
    return undefined
  }
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")
}

/** utime + stime of a stat file's fields, in clock ticks. */
export const cpuTicks = (fields: ReadonlyArray<string>): number => Number(fields[11]) + Number(fields[12])

/** User + system CPU time of the process so far, in milliseconds. */
export const cpuMs = (pid: number): number => {
  const fields = statFields(`/proc/${pid}/stat`)
  return fields === undefined ? NaN : cpuTicks(fields) * CLOCK_TICK_MS // NaN: the process is gone
}

/** VmRSS and VmHWM (peak) in bytes. */
export const memory = (pid: number): { readonly rss: number; readonly hwm: number } => {
  let status = ""
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8")
  } catch {
    // the process is gone: NaN below
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024
  return { rss: kb("VmRSS"), hwm: kb("VmHWM") }
}

/** Samples RSS every `everyMs` until stopped; returns the peak seen. */
export const sampleRss = (pid: number, everyMs = 50) => {
  let peak = memory(pid).rss
  const timer = setInterval(() => {
    peak = Math.max(peak, memory(pid).rss)
  }, everyMs)
  return {
    stop: () => {
      clearInterval(timer)
      peak = Math.max(peak, memory(pid).rss)
      return peak
    }
  }
}

export const isAlive = (server: Pick<Server, "child">): boolean => server.child.exitCode === null && server.child.signalCode === null

/** Load average of the last minute (how shared the machine was). */
export const loadAverage = (): number => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0])

export const cpuModel = (): string => {
  try {
    const info = readFileSync("/proc/cpuinfo", "utf8")
    const model = /^model name\s*:\s*(.+)$/m.exec(info)?.[1] ?? "unknown"
    const cores = info.split("\n").filter((l) => l.startsWith("processor")).length
    return `${model} (${cores} cores)`
  } catch {
    return "unknown"
  }
}
