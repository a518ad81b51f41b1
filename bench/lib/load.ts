/**
 * Load generators. autocannon (programmatic API, in this process on the load core) for the
 * request/response scenarios, with every latency kept exactly (autocannon's histogram rounds to
 * whole milliseconds); a keep-alive node:http downloader for S4, which reads 256 MiB bodies
 * without copying them (autocannon appends every body chunk to a string).
 */
import autocannon from "autocannon"
import * as http from "node:http"
import { cpuMs } from "./proc.js"

export interface Measurement {
  /** Completed requests per second. */
  readonly rps: number
  /** Response bytes per second (bodies and headers as autocannon counts them; S4: bodies). */
  readonly bytesPerSec: number
  readonly p50: number
  readonly p99: number
  readonly completed: number
  /** Server CPU time per completed request, in microseconds (from /proc). */
  readonly cpuUsPerReq: number
  /** Server CPU use during the round, 1 = one full core. */
  readonly cpuShare: number
  /** Any response that is not a 2xx, any error or timeout: the round does not count. */
  readonly failures: ReadonlyArray<string>
}

export interface LoadOptions {
  readonly url: string
  readonly method?: string
  readonly body?: string
  readonly headers?: Record<string, string>
  readonly connections: number
  readonly durationS: number
  /** The server's pid, for CPU time. */
  readonly pid: number
}

export const percentile = (sorted: ArrayLike<number>, p: number): number => {
  if (sorted.length === 0) return NaN
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i]!
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b)
  if (s.length === 0) return NaN
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

export const runAutocannon = (options: LoadOptions): Promise<Measurement> =>
  new Promise((resolve, reject) => {
    const latencies: Array<number> = []
    const cpuBefore = cpuMs(options.pid)
    const started = performance.now()
    const instance = autocannon({
      url: options.url,
      method: options.method ?? "GET",
      ...(options.body !== undefined ? { body: options.body } : {}),
      headers: options.headers ?? {},
      connections: options.connections,
      duration: options.durationS,
      timeout: 30
    }, (error, result) => {
      if (error !== null) return reject(error)
      const elapsedS = (performance.now() - started) / 1000
      const cpu = cpuMs(options.pid) - cpuBefore
      const sorted = Float64Array.from(latencies).sort()
      const completed = result["2xx"]
      const failures: Array<string> = []
      if (result.non2xx > 0) failures.push(`${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)})`)
      if (result.errors > 0) failures.push(`${result.errors} errors`)
      if (result.timeouts > 0) failures.push(`${result.timeouts} timeouts`)
      if (completed === 0) failures.push("no response")
      resolve({
        rps: completed / result.duration,
        bytesPerSec: result.throughput.total / result.duration,
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
        completed,
        cpuUsPerReq: completed > 0 ? (cpu * 1000) / completed : NaN,
        cpuShare: cpu / 1000 / elapsedS,
        failures
      })
    })
    instance.on("response", (_client: unknown, status: number, _bytes: number, responseTime: number) => {
      if (status >= 200 && status < 300) latencies.push(responseTime)
    })
  })

export interface DownloadOptions {
  readonly url: string
  readonly connections: number
  readonly durationS: number
  readonly expectedBytes: number
  readonly pid: number
}

/**
 * Downloads the URL over `connections` keep-alive connections, again and again until the
 * duration is over (downloads in flight then finish). Every response must be a 200 with exactly
 * `expectedBytes` of body.
 */
export const runDownloads = async (options: DownloadOptions): Promise<Measurement> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections })
  const failures: Array<string> = []
  const latencies: Array<number> = []
  let bytes = 0
  let completed = 0
  const cpuBefore = cpuMs(options.pid)
  const started = performance.now()
  const until = started + options.durationS * 1000

  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now()
      const req = http.get(options.url, { agent }, (res) => {
        let got = 0
        res.on("data", (chunk: Buffer) => {
          got += chunk.length
        })
        res.on("end", () => {
          if (res.statusCode !== 200) failures.push(`status ${res.statusCode}`)
          else if (got !== options.expectedBytes) failures.push(`${got} bytes instead of ${options.expectedBytes}`)
          else {
            completed++
            bytes += got
            latencies.push(performance.now() - t0)
          }
          resolve()
        })
        res.on("error", (e) => {
          failures.push(String(e))
          resolve()
        })
      })
      req.on("error", (e) => {
        failures.push(String(e))
        resolve()
      })
    })

  await Promise.all(Array.from({ length: options.connections }, async () => {
    while (performance.now() < until && failures.length === 0) await one()
  }))
  agent.destroy()
  const elapsedS = (performance.now() - started) / 1000
  const cpu = cpuMs(options.pid) - cpuBefore
  const sorted = Float64Array.from(latencies).sort()
  if (completed === 0) failures.push("no download completed")
  return {
    rps: completed / elapsedS,
    bytesPerSec: bytes / elapsedS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    completed,
    cpuUsPerReq: completed > 0 ? (cpu * 1000) / completed : NaN,
    cpuShare: cpu / 1000 / elapsedS,
    failures
  }
}
