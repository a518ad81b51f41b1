/**
 * Server processes: started pinned to the server core, waited for until /v1/health answers,
 * measured through /proc (CPU time, RSS), and always killed by pid, also when the run fails.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { closeSync, ftruncateSync, fstatSync, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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

/**
 * Where servers write their output: a file each (BENCH_SERVER_LOG=pipe: a pipe this process
 * reads, as before). A server's log goes where a collector would keep it, paid for by the server's
 * own write; read from a pipe, the gateway's request log (4-5 MB/s under S1) was read here, on the
 * load generator's core, by the process generating the load, and only the gateway logs per request.
 */
const LOG_SINK = process.env.BENCH_SERVER_LOG === "pipe" ? "pipe" : "file"
let logDir: string | undefined
const OUTPUT_KEPT = 20_000
/** A log file past this is cut back to its tail (a whole bench writes gigabytes of request lines). */
const LOG_FILE_MAX = 64 * 1024 * 1024

/** The last `bytes` of the open file `fd`. */
const tailOf = (fd: number, bytes: number): string => {
  const size = fstatSync(fd).size
  const length = Math.min(bytes, size)
  const buffer = Buffer.alloc(length)
  readSync(fd, buffer, 0, length, size - length)
  return buffer.toString("utf8")
}

/** The server's stdout and stderr, and a reader of their last 20,000 characters. */
const outputOf = (name: string, port: number): { readonly stdio: ["ignore", number | "pipe", number | "pipe"]; readonly attach: (child: ChildProcess) => () => string } => {
  if (LOG_SINK === "pipe") {
    return {
      stdio: ["ignore", "pipe", "pipe"],
      attach: (child) => {
        let log = ""
        const keep = (chunk: Buffer) => {
          log = (log + chunk.toString("utf8")).slice(-OUTPUT_KEPT)
        }
        child.stdout!.on("data", keep)
        child.stderr!.on("data", keep)
        return () => log
      }
    }
  }
  logDir ??= mkdtempSync(join(tmpdir(), "bench-logs-"))
  // Appending: a cut (ftruncate) moves every later write back to the start.
  const fd = openSync(join(logDir, `${name.replace(/[^\w.-]/g, "_")}-${port}.log`), "a+")
  return {
    stdio: ["ignore", fd, fd],
    attach: (child) => {
      let kept = ""
      const cut = setInterval(() => {
        if (fstatSync(fd).size > LOG_FILE_MAX) {
          kept = tailOf(fd, OUTPUT_KEPT)
          ftruncateSync(fd, 0)
        }
      }, 2_000).unref()
      child.once("exit", () => {
        clearInterval(cut)
        kept = (kept + tailOf(fd, OUTPUT_KEPT)).slice(-OUTPUT_KEPT)
        closeSync(fd)
      })
      return () => (child.exitCode === null && child.signalCode === null ? (kept + tailOf(fd, OUTPUT_KEPT)).slice(-OUTPUT_KEPT) : kept)
    }
  }
}

process.once("exit", () => {
  if (logDir !== undefined) rmSync(logDir, { recursive: true, force: true })
})

export const startServer = async (options: StartOptions): Promise<Server> => {
  const args = [...options.nodeArgs]
  const pinned = (options.pin ?? true) && hasTaskset
  const started = performance.now()
  const out = outputOf(options.name, options.port)
  const child = pinned
    ? spawn("taskset", ["-c", String(options.core ?? SERVER_CORE), process.execPath, ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...options.env, PORT: String(options.port) },
      stdio: out.stdio
    })
    : spawn(process.execPath, args, {
      cwd: options.cwd ?? process.cwd(),
      env: { ...process.env, ...options.env, PORT: String(options.port) },
      stdio: out.stdio
    })
  // taskset execs node in place: the child's pid is the server's pid.
  const output = out.attach(child)
  const server: Server = { name: options.name, port: options.port, pid: child.pid!, child, startMs: NaN, output }
  running.add(server)
  const deadline = started + (options.timeoutMs ?? 60_000)
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      running.delete(server)
      throw new Error(`${options.name} exited (${child.exitCode ?? child.signalCode}) before answering:\n${output()}`)
    }
    if ((await getStatus(options.port, options.readyPath ?? "/v1/health", 500)) === 200) {
      return { ...server, startMs: performance.now() - started }
    }
    await sleep(5)
  }
  await stopServer(server)
  throw new Error(`${options.name} did not answer ${options.readyPath ?? "/v1/health"} within ${options.timeoutMs ?? 60_000} ms:\n${output()}`)
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

/** Busy and total clock ticks of each core so far (/proc/stat), core 0 first. */
export const coreTicks = (): ReadonlyArray<{ readonly busy: number; readonly total: number }> =>
  readFileSync("/proc/stat", "utf8").split("\n").filter((l) => /^cpu\d+ /.test(l)).map((l) => {
    const f = l.trim().split(/\s+/).slice(1).map(Number)
    const total = f.reduce((a, b) => a + b, 0)
    return { busy: total - f[3]! - f[4]!, total } // idle and iowait are not busy
  })

/** Each core's busy share between two `coreTicks` readings. */
export const coreBusy = (before: ReturnType<typeof coreTicks>, after: ReturnType<typeof coreTicks>): Array<number> =>
  after.map((c, i) => (c.busy - before[i]!.busy) / Math.max(1, c.total - before[i]!.total))

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
