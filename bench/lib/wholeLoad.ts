/**
 * S8, the whole under load: the gateway as `npm start` runs it (dist/main.js, its node
 * flags, embedded SQLite), and at the same time
 * - 16 uploads of 30 MiB (base64 JSON, about 40 MiB each), each on its own connection; a 503
 *   with Retry-After is waited out and retried, as a client should;
 * - 100 event streams (SSE, from four client addresses) on a timeline of a few MB, read as they come;
 * - a flood of requests abandoned mid-body (raw sockets, several paths);
 * - /v1/health every 20 ms on one keep-alive connection, timed.
 * Measured: peak RSS (VmHWM, and VmRSS sampled every 50 ms), every status (a 5xx other than a 503
 * with Retry-After is a failure), health's p50/p99/max, and `effect_fiber_active` before and after.
 */
import * as http from "node:http"
import { randomBytes } from "node:crypto"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { setTimeout as sleep } from "node:timers/promises"
import { abortOne, type AbortTarget } from "../../test/faults/abortFlood.js"
import { cpuMs, memory, type Server } from "./proc.js"

const knob = (name: string, fallback: number) => {
  const v = process.env[name]
  return v === undefined || v === "" ? fallback : Number(v)
}

/** The load; BENCH_S8_UPLOADS, BENCH_S8_STREAMS and BENCH_S8_ABORTERS change its parts (to look at one alone). */
export const S8 = {
  uploads: knob("BENCH_S8_UPLOADS", 16),
  uploadBytes: 30 * 1024 * 1024,
  streams: knob("BENCH_S8_STREAMS", 100),
  timelineEvents: 200,
  eventPayloadBytes: 20_000,
  abortConcurrency: knob("BENCH_S8_ABORTERS", 20),
  /**
   * The flood comes from another client address than the uploads, streams and health checks
   * (BENCH_S8_ABORT_FROM; "127.0.0.1" to share theirs). A request abandoned while it waits for
   * body budget is not seen to be gone until its wait ends (its socket is not read meanwhile),
   * so the flood keeps hundreds of connections open (743 counted); sharing an address with it,
   * the others' new connections were closed by the per-client cap (SVC_MAX_CONNECTIONS_PER_CLIENT 256).
   */
  abortFrom: process.env.BENCH_S8_ABORT_FROM || "127.0.0.2",
  healthEveryMs: 20,
  /** The RSS the gateway must stay under while all this runs. */
  rssBudgetBytes: 640 * 1024 * 1024,
  healthP99TargetMs: 250
} as const

export interface S8Result {
  readonly baselineRss: number
  readonly peakRss: number
  readonly uploadsDone: number
  readonly uploadRetries: number
  readonly seconds: number
  readonly statuses: Record<string, number>
  /** 5xx answers other than a 503 with Retry-After (must be 0), and connection failures. */
  readonly bad: ReadonlyArray<string>
  readonly health: { readonly count: number; readonly p50: number; readonly p99: number; readonly max: number }
  readonly streams: number
  readonly streamsOpened: number
  readonly streamBytes: number
  readonly aborts: number
  readonly fibersBefore: number
  readonly fibersAfter: number
  /** The server's event-loop delay over the load (monitorEventLoopDelay via /metrics), ms. */
  readonly loopDelay: { readonly p99: number; readonly max: number }
  /** The load generator's event-loop delay over the load, ms. */
  readonly clientLoopDelay: { readonly p99: number; readonly max: number }
  /** CPU time the server spent over the load (user + system), s. */
  readonly cpuSeconds: number
}

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  if (xs.length === 0) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

interface Answer {
  readonly status: number
  readonly retryAfter: string | undefined
  readonly body: string
}

const request = (port: number, method: string, path: string, body?: Buffer | string, agent: http.Agent | false = false) =>
  new Promise<Answer>((resolve) => {
    const req = http.request(
      { host: "127.0.0.1", port, method, path, agent, headers: body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (c: string) => (text.length < 4096 ? (text += c) : undefined))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined, body: text }))
        res.on("error", () => resolve({ status: 0, retryAfter: undefined, body: "response error" }))
      }
    )
    req.on("error", (e) => resolve({ status: 0, retryAfter: undefined, body: e.message }))
    req.end(body)
  })

/** From /metrics: active fibers, and the event-loop delay since the first scrape (p99, max; ms). */
const scrape = (port: number) =>
  new Promise<{ fibers: number; lagP99: number; lagMax: number }>((resolve) => {
    const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN)
    http.get({ host: "127.0.0.1", port, path: "/metrics", agent: false }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (c: string) => (text += c))
      res.on("end", () =>
        resolve({
          fibers: value(text, "effect_fiber_active"),
          lagP99: value(text, "nodejs_eventloop_lag_p99_seconds") * 1000,
          lagMax: value(text, "nodejs_eventloop_lag_max_seconds") * 1000
        }))
    }).on("error", () => resolve({ fibers: NaN, lagP99: NaN, lagMax: NaN }))
  })

export const runS8 = async (
  server: Pick<Server, "pid" | "port">,
  log: (msg: string) => void,
  /** Event streams to open (S8.streams; 0 to see the rest alone). */
  streams: number = S8.streams
): Promise<S8Result> => {
  const { port, pid } = server
  const statuses: Record<string, number> = {}
  const bad: Array<string> = []
  const count = (what: string, a: Answer) => {
    const key = `${what} ${a.status}${a.status === 503 && a.retryAfter !== undefined ? " (Retry-After)" : ""}`
    statuses[key] = (statuses[key] ?? 0) + 1
    if (a.status === 0 || (a.status >= 500 && !(a.status === 503 && a.retryAfter !== undefined))) {
      if (bad.length < 20) bad.push(`${what}: ${a.status} ${a.body.slice(0, 200)}`)
      else bad.length === 20 && bad.push("...")
    }
  }

  // The world: a task, and a timeline of a few MB on it.
  const entities = JSON.parse((await request(port, "GET", "/v1/entities")).body) as Array<{ id: string }>
  const created = await request(port, "POST", `/v1/entities/${entities[0]!.id}/tasks`, JSON.stringify({ workflowId: "expense-review", context: { period: "2026-11" } }))
  if (created.status !== 201) throw new Error(`S8: creating the task: ${created.status} ${created.body}`)
  const taskId = encodeURIComponent((JSON.parse(created.body) as { id: string }).id)
  const filler = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(Math.ceil(S8.eventPayloadBytes / 36)).slice(0, S8.eventPayloadBytes)
  // The task's creation wrote engine events at the first seqs: the bench's come after them.
  const first = 1000
  for (let seq = first; seq < first + S8.timelineEvents; seq++) {
    const a = await request(port, "POST", `/v1/tasks/${taskId}/events`, JSON.stringify({ type: "bench.note", source: "bench", seq, payload: { seq, text: filler } }))
    if (a.status !== 200 && a.status !== 201) throw new Error(`S8: posting event ${seq}: ${a.status} ${a.body}`)
  }
  log(`S8: timeline of ${S8.timelineEvents} events (${((S8.timelineEvents * S8.eventPayloadBytes) / 1e6).toFixed(1)} MB) on task ${taskId}`)
  await sleep(12_000) // the server's idle collection (nodeServer.ts) runs: a clean baseline
  const baselineRss = memory(pid).rss
  // The first scrape also starts the server's event-loop delay histogram: it covers the load.
  const fibersBefore = (await scrape(port)).fibers
  const cpuBefore = cpuMs(pid)

  let running = true
  // RSS sampling.
  let peakRss = baselineRss
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, memory(pid).rss)
  }, 50)

  // The load generator's own event-loop delay: health is timed here, so a stall of this process
  // (the machine is shared) counts in health's latency too.
  const clientLoop = monitorEventLoopDelay({ resolution: 20 })
  clientLoop.enable()
  // Health, timed, on one keep-alive connection.
  const healthMs: Array<number> = []
  const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const health = (async () => {
    while (running) {
      const t = performance.now()
      const a = await request(port, "GET", "/v1/health", undefined, healthAgent)
      healthMs.push(performance.now() - t)
      count("health", a)
      await sleep(S8.healthEveryMs)
    }
  })()

  // Streams: opened, read until the end of the phase.
  const STREAM_CLIENTS = 4
  let streamsOpened = 0
  let streamBytes = 0
  const streamRequests: Array<http.ClientRequest> = []
  for (let i = 0; i < streams; i++) {
    // From four client addresses: one client may hold a quarter of the stream slots
    // (SVC_EVENT_STREAMS_PER_CLIENT), so 100 streams are four followers' worth, not one's.
    const localAddress = `127.0.0.${10 + (i % STREAM_CLIENTS)}`
    const req = http.get({ host: "127.0.0.1", port, localAddress, path: `/v1/tasks/${taskId}/events/stream`, agent: false, headers: { accept: "text/event-stream" } }, (res) => {
      count("stream", { status: res.statusCode ?? 0, retryAfter: res.headers["retry-after"] as string | undefined, body: "" })
      if (res.statusCode === 200) streamsOpened++
      res.on("data", (c: Buffer) => (streamBytes += c.length))
      res.on("error", () => {})
    })
    req.on("error", (e) => {
      if (running) count("stream", { status: 0, retryAfter: undefined, body: e.message })
    })
    streamRequests.push(req)
  }

  // The abort flood, until the uploads are done.
  let aborts = 0
  const targets: ReadonlyArray<AbortTarget> = [
    { method: "POST", path: `/v1/tasks/${taskId}/files` },
    { method: "POST", path: `/v1/tasks/${taskId}/action` },
    { method: "POST", path: "/mcp" },
    { method: "PUT", path: "/no/such/path", chunked: true }
  ]
  const flood = Promise.all(Array.from({ length: S8.abortConcurrency }, async (_, w) => {
    while (running) {
      await abortOne(port, targets[(aborts + w) % targets.length]!, { declaredBytes: 1024 * 1024, sentBytes: 32 * 1024, holdMs: 20, localAddress: S8.abortFrom })
      aborts++
    }
  }))

  // The uploads: each retries a 503 with Retry-After until it is stored.
  const upload = Buffer.from(JSON.stringify({ source: "bench", fileName: "big.bin", data: randomBytes(S8.uploadBytes).toString("base64") }))
  const started = performance.now()
  let uploadsDone = 0
  let uploadRetries = 0
  const uploads = Promise.all(Array.from({ length: S8.uploads }, async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const a = await request(port, "POST", `/v1/tasks/${taskId}/files`, upload)
      count("upload", a)
      if (a.status === 201) {
        uploadsDone++
        return
      }
      if (a.status !== 503 || a.retryAfter === undefined) return
      uploadRetries++
      await sleep(Number(a.retryAfter) * 1000 * (0.5 + Math.random()))
    }
  }))
  await uploads
  const seconds = (performance.now() - started) / 1000
  running = false
  await Promise.all([health, flood])
  for (const req of streamRequests) req.destroy()
  healthAgent.destroy()
  clearInterval(sampler)
  clientLoop.disable()
  peakRss = Math.max(peakRss, memory(pid).hwm)
  await sleep(1_000)
  const cpuSeconds = (cpuMs(pid) - cpuBefore) / 1000
  const after = await scrape(port)
  const fibersAfter = after.fibers
  return {
    baselineRss,
    peakRss,
    uploadsDone,
    uploadRetries,
    seconds,
    statuses,
    bad,
    health: { count: healthMs.length, p50: percentile(healthMs, 50), p99: percentile(healthMs, 99), max: Math.max(...healthMs) },
    streams,
    streamsOpened,
    streamBytes,
    aborts,
    fibersBefore,
    fibersAfter,
    loopDelay: { p99: after.lagP99, max: after.lagMax },
    clientLoopDelay: { p99: clientLoop.percentile(99) / 1e6, max: clientLoop.max / 1e6 },
    cpuSeconds
  }
}

const SECTION_START = "<!-- S8: written by `BENCH_ONLY=S8 npm run bench` (bench/lib/wholeLoad.ts) -->"
const SECTION_END = "<!-- /S8 -->"

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MB`

/** Whether S8 met its targets: RSS under budget, no bad 5xx, health's p99 under target, every upload stored. */
export const s8Met = (r: S8Result) => ({
  rss: r.peakRss <= S8.rssBudgetBytes,
  no5xx: r.bad.length === 0,
  health: r.health.p99 < S8.healthP99TargetMs,
  uploads: r.uploadsDone === S8.uploads,
  streams: r.streamsOpened === r.streams
})

const rowsOf = (r: S8Result, label: string): Array<string> => {
  const met = s8Met(r)
  const yes = (b: boolean) => (b ? "yes" : "**no**")
  return [
    `| ${label} | peak RSS (VmHWM / VmRSS sampled every 50 ms) | ${mb(r.peakRss)} (idle before: ${mb(r.baselineRss)}) | <= ${mb(S8.rssBudgetBytes)} | ${yes(met.rss)} |`,
    `| ${label} | 5xx other than 503 with Retry-After (and failed connections) | ${r.bad.length}${r.bad.length > 0 ? `: ${r.bad.slice(0, 3).join("; ").replace(/\|/g, "/")}` : ""} | 0 | ${yes(met.no5xx)} |`,
    `| ${label} | /v1/health latency p50 / p99 / max (${r.health.count} requests) | ${r.health.p50.toFixed(1)} / ${r.health.p99.toFixed(1)} / ${r.health.max.toFixed(0)} ms | p99 < ${S8.healthP99TargetMs} ms | ${yes(met.health)} |`,
    `| ${label} | event-loop delay p99 / max: server (/metrics), load generator; server CPU | ${r.loopDelay.p99.toFixed(0)} / ${r.loopDelay.max.toFixed(0)} ms, ${r.clientLoopDelay.p99.toFixed(0)} / ${r.clientLoopDelay.max.toFixed(0)} ms; ${r.cpuSeconds.toFixed(1)} s | (explains health) | - |`,
    `| ${label} | uploads stored | ${r.uploadsDone} of ${S8.uploads} in ${r.seconds.toFixed(1)} s, after ${r.uploadRetries} retries (503 with Retry-After) | all | ${yes(met.uploads)} |`,
    `| ${label} | event streams opened | ${r.streamsOpened} of ${r.streams} (${mb(r.streamBytes)} read) | all | ${yes(met.streams)} |`,
    `| ${label} | requests abandoned mid-body | ${r.aborts}; effect_fiber_active ${r.fibersBefore} before, ${r.fibersAfter} after | back to baseline | ${yes(r.fibersAfter <= r.fibersBefore + 5)} |`
  ]
}

/** RESULTS.md's S8 section: the whole, then the same without the event streams (what they add). */
export const renderS8 = (
  whole: S8Result,
  withoutStreams: S8Result | undefined,
  context: { readonly date: string; readonly commit: string; readonly settings: string; readonly load: string }
): string => {
  const statuses = (r: S8Result) => Object.entries(r.statuses).sort().map(([k, n]) => `${k}: ${n}`).join(", ")
  return [
    SECTION_START,
    "## S8: the whole under load",
    "",
    `Run ${context.date} at commit ${context.commit}; ${context.load}. The gateway as \`npm start\` runs it (dist/main.js, embedded SQLite), ` +
      `${context.settings}. At once: ${S8.uploads} uploads of ${S8.uploadBytes / 1024 / 1024} MiB files (base64 JSON bodies of ` +
      `${((Math.ceil(S8.uploadBytes / 3) * 4) / 1024 / 1024).toFixed(0)} MiB, each on its own connection; a 503 with Retry-After is waited out and retried), ` +
      `${S8.streams} event streams (SSE, from four client addresses: one client may hold a quarter of the slots) on a timeline of ${S8.timelineEvents} events of ${S8.eventPayloadBytes / 1000} KB, read as they come, ` +
      `${S8.abortConcurrency} clients abandoning requests mid-body in a loop (4 paths; from ${S8.abortFrom}, another client address than the rest), and GET /v1/health every ${S8.healthEveryMs} ms on one keep-alive connection. ` +
      `Then the same on a fresh process without the event streams, to tell what they add. ` +
      `RSS budget: ${mb(S8.rssBudgetBytes)}, the idle process (~110 MB) and 4x the 128 MiB body budget (a base64 body cost about 3-4x its size while parsed, decoded and stored; about 2.5x since its long strings are made from the bytes and one large input is worked on at a time).`,
    "",
    "| Run | Metric | Value | Target | Met |",
    "|---|---|---|---|---|",
    ...rowsOf(whole, "whole"),
    ...(withoutStreams === undefined ? [] : rowsOf(withoutStreams, "without streams")),
    "",
    `Statuses (whole): ${statuses(whole)}.${withoutStreams === undefined ? "" : ` Without streams: ${statuses(withoutStreams)}.`}`,
    SECTION_END
  ].join("\n")
}

/** `markdown` with its S8 section replaced by `section` (appended when it has none). */
export const spliceS8 = (markdown: string, section: string): string => {
  const start = markdown.indexOf(SECTION_START)
  const end = markdown.indexOf(SECTION_END)
  if (start === -1 || end === -1) return `${markdown.trimEnd()}\n\n${section}\n`
  return markdown.slice(0, start) + section + markdown.slice(end + SECTION_END.length)
}

/** The S8 section of `markdown`, if it has one. */
export const sectionS8 = (markdown: string): string | undefined => {
  const start = markdown.indexOf(SECTION_START)
  const end = markdown.indexOf(SECTION_END)
  return start === -1 || end === -1 ? undefined : markdown.slice(start, end + SECTION_END.length)
}
