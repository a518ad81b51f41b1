/**
 * GET /v1/health every 20 ms on one keep-alive connection, from a process of its own pinned to
 * the load core: a probe in the load generator's process measures that process's event loop too
 * (sending 16 x 30 MiB from it held it for up to a second at a time here). With the gateway's
 * pid, each probe also records the gateway's event-loop thread's time on a CPU and waiting for
 * one meanwhile (ms, from the kernel's schedstat), and the CPU time of its other threads.
 */
import { spawn } from "node:child_process"
import { LOAD_CORE } from "./proc.js"

export interface Probe {
  /** Start, in seconds since the epoch. */
  readonly at: number
  readonly ms: number
  readonly status: number
  /** The gateway's loop thread on a CPU / waiting for one / its other threads on a CPU, ms (0 without a pid). */
  readonly ran: number
  readonly queued: number
  readonly others: number
}

const SCRIPT = `
const http = require("node:http"), fs = require("node:fs")
const [port, pid] = process.argv.slice(1).map(Number)
const read = (p) => { try { return fs.readFileSync(p, "utf8") } catch { return "" } }
const sched = () => pid > 0 ? read("/proc/" + pid + "/task/" + pid + "/schedstat").split(" ").map(Number) : [0, 0]
const others = () => {
  if (!(pid > 0)) return 0
  let ns = 0
  let tids = []
  try { tids = fs.readdirSync("/proc/" + pid + "/task") } catch {}
  for (const tid of tids) if (tid !== String(pid)) ns += Number(read("/proc/" + pid + "/task/" + tid + "/schedstat").split(" ")[0]) || 0
  return ns
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
const probes = []
let stopped = false
process.stdin.on("data", () => {}).on("end", () => (stopped = true))
const once = () => {
  if (stopped) return void (process.stdout.write(JSON.stringify(probes)), agent.destroy())
  const at = Date.now() / 1000, before = sched(), otherBefore = others(), t = performance.now()
  const done = (status) => {
    const ms = performance.now() - t, after = sched()
    if (probes.length === 0) process.stdout.write("ready\\n")
    probes.push({ at, ms, status, ran: (after[0] - before[0]) / 1e6, queued: (after[1] - before[1]) / 1e6, others: (others() - otherBefore) / 1e6 })
    setTimeout(once, 20)
  }
  http.get({ host: "127.0.0.1", port, path: "/v1/health", agent }, (res) => {
    res.resume()
    res.on("end", () => done(res.statusCode))
  }).on("error", () => done(0))
}
once()
`

/** Starts probing; resolves once the first probe answered. `stop` returns every probe. */
export const startHealthProbe = async (port: number, gatewayPid = 0) => {
  const child = spawn("taskset", ["-c", String(LOAD_CORE), process.execPath, "-e", SCRIPT, String(port), String(gatewayPid)], {
    stdio: ["pipe", "pipe", "inherit"]
  })
  let out = ""
  child.stdout!.on("data", (c) => (out += c))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  await new Promise<void>((resolve, reject) => {
    const check = () => (out.startsWith("ready\n") ? resolve() : undefined)
    child.stdout!.on("data", check)
    child.once("exit", () => reject(new Error(`the health probe exited before its first answer: ${out}`)))
  })
  return {
    stop: async (): Promise<Array<Probe>> => {
      child.stdin!.end()
      await exited
      return JSON.parse(out.slice("ready\n".length)) as Array<Probe>
    },
    kill: () => {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }
}
