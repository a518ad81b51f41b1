/**
 * On the built process: timeline answers and stream pages have a byte budget
 * (SVC_EVENTS_PAGE_BYTES) and say how to read on; a stream whose client does not read holds at
 * most a page and is disconnected after SVC_EVENTS_STREAM_STALL_MS; clients that never read
 * their sockets do not pin the timeline per connection, and health stays responsive.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { openSse } from "./sse.js"
import { waitFor } from "../support/waitFor.js"

/** Demo tasks: events 1..3 seeded on the first, none on the second. */
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const BIG_TASK = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
const PAGE_BYTES = 256 * 1024

const dirs: Array<string> = []
const services: Array<RunningService> = []
const sockets: Array<Socket> = []
afterAll(async () => {
  sockets.forEach((s) => s.destroy())
  await Promise.all(services.map((s) => s.stop()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const start = async (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "events-budget-"))
  dirs.push(dir)
  const service = await startBuilt({
    SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
    SVC_ADMIN_PORT: "off",
    SVC_EVENTS_PAGE_BYTES: String(PAGE_BYTES),
    ...env
  })
  services.push(service)
  return service
}

/** Posts a producer's event; answers its position. */
const post = async (url: string, taskId: string, seq: number, bytes: number): Promise<string> => {
  const res = await http("POST", `${url}/v1/tasks/${taskId}/events`, {
    type: "note",
    source: "worker",
    seq,
    payload: { text: "x".repeat(bytes) }
  })
  expect(res.status).toBe(200)
  expect(typeof res.body.event.position).toBe("string")
  return res.body.event.position
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

/** A connection that sends one GET and, once the answer has begun, never reads another byte. */
const neverReads = (url: string, path: string) =>
  new Promise<Socket>((resolve, reject) => {
    const { hostname, port } = new URL(url)
    const socket = connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`)
    })
    socket.once("data", (first) => {
      socket.pause()
      expect(first.subarray(0, 15).toString()).toBe("HTTP/1.1 200 OK")
      resolve(socket)
    })
    socket.on("error", () => {})
    socket.once("error", reject)
    sockets.push(socket)
  })

const healthMs = async (url: string) => {
  const t0 = performance.now()
  const res = await fetch(`${url}/v1/health`, { signal: AbortSignal.timeout(10_000) })
  await res.arrayBuffer()
  return performance.now() - t0
}

// The three run at once, each on its own gateway: the second and third mostly wait (on the stall
// bound, on a reader that takes 300 KB/s), and what each proves is about its own process.
describe.concurrent("timeline budgets (built process)", () => {
  it("GET /events stops at the byte budget and says where to read on; following it reads every event once, in order; the stream too", async () => {
    const gw = await start({})
    const seqs: Array<number> = [1, 2, 3]
    for (let seq = 10; seq < 110; seq++) {
      // One event larger than the whole budget, in the middle.
      await post(gw.url, TASK, seq, seq === 50 ? 3 * PAGE_BYTES : 10_000)
      seqs.push(seq)
    }

    const url = `${gw.url}/v1/tasks/${TASK}/events`
    const first = await http("GET", url)
    expect(first.status).toBe(200)
    expect(first.body.hasMore).toBe(true)
    expect(first.body.nextAfter).toBe(first.body.events.at(-1).position)
    // The budget, and at most the one event that takes it past.
    expect(first.text.length).toBeLessThan(PAGE_BYTES + 20_000)
    expect(first.text.length).toBeGreaterThan(PAGE_BYTES - 20_000)

    const seen: Array<number> = []
    const positions = new Map<number, string>()
    let after: string | undefined
    let pages = 0
    for (;;) {
      const res = await http("GET", after === undefined ? url : `${url}?after=${after}`)
      expect(res.status).toBe(200)
      const events = res.body.events as Array<{ seq: number; position: string; payload: { text: string } }>
      pages++
      seen.push(...events.map((e) => e.seq))
      for (const e of events) positions.set(e.seq, e.position)
      // An event larger than the budget ends its page (never stuck); the others stay near the budget.
      if (events.some((e) => e.seq === 50)) expect(events.at(-1)!.seq).toBe(50)
      else expect(res.text.length).toBeLessThan(PAGE_BYTES + 20_000)
      if (res.body.nextAfter === undefined) {
        expect(Object.keys(res.body)).toEqual(["events"]) // the spec's answer at the end
        break
      }
      expect(res.body).toMatchObject({ hasMore: true, nextAfter: events.at(-1)!.position })
      after = res.body.nextAfter
      expect(pages).toBeLessThan(50)
    }
    // Every event once (one position each), in the order the producer posted them.
    expect(seen).toEqual(seqs)
    expect(new Set(positions.values()).size).toBe(seqs.length)
    expect(pages).toBeGreaterThan(4)

    // limit: exact, with hasMore only when more exist.
    const limited = await http("GET", `${url}?after=${positions.get(100)}&limit=8`)
    expect(limited.body).toMatchObject({ hasMore: true, nextAfter: positions.get(108) })
    expect(limited.body.events.map((e: { seq: number }) => e.seq)).toEqual([101, 102, 103, 104, 105, 106, 107, 108])
    const rest = await http("GET", `${url}?after=${positions.get(100)}&limit=9`)
    expect(Object.keys(rest.body)).toEqual(["events"])
    expect(rest.body.events).toHaveLength(9)

    // The stream: every event once, in the timeline's order, across page cuts; each id its position.
    const sse = await openSse(`${gw.url}/v1/tasks/${TASK}/events/stream`)
    try {
      const streamed: Array<number> = []
      while (streamed.at(-1) !== 109) {
        const frame = await sse.nextEvent(10_000)
        const event = JSON.parse(frame.data!) as { seq: number; position: string }
        expect(frame.id).toBe(event.position)
        expect(event.position).toBe(positions.get(event.seq))
        streamed.push(event.seq)
      }
      expect(streamed).toEqual(seqs)
      // And what comes after, live.
      const live = await post(gw.url, TASK, 200, 10)
      expect((await sse.nextEvent(5000)).id).toBe(live)
    } finally {
      sse.close()
    }
  }, 120_000)

  it("clients that never read: memory stays bounded, health answers, stalled streams are disconnected and their slots freed", async () => {
    const STREAMS = 30
    // One client fills every slot here: its share is the whole (SVC_EVENT_STREAMS_PER_CLIENT).
    // The stall bound outlasts what is checked while the streams are held (about 5 s of
    // sampling, then the refusal: each health answer is held under 1 s) with room to spare; a
    // stream stalls from the last byte it took, never before it opened.
    const gw = await start({ SVC_EVENT_STREAMS_MAX: String(STREAMS), SVC_EVENT_STREAMS_PER_CLIENT: String(STREAMS), SVC_EVENTS_STREAM_STALL_MS: "12000" })
    // A 12 MiB timeline of 256 KiB events.
    const positions: Array<string> = []
    for (let seq = 1; seq <= 48; seq++) positions.push(await post(gw.url, BIG_TASK, seq, 256 * 1024))
    // Warm up: one full read of each kind.
    for (let i = 0; i < 3; i++) await http("GET", `${gw.url}/v1/tasks/${BIG_TASK}/events`)
    const baseline = rssMb(gw.pid)

    await Promise.all([
      ...Array.from({ length: STREAMS }, () => neverReads(gw.url, `/v1/tasks/${BIG_TASK}/events/stream`)),
      ...Array.from({ length: 30 }, () => neverReads(gw.url, `/v1/tasks/${BIG_TASK}/events`))
    ])
    // For 5 s: the peak RSS, and health every half second.
    let loaded = 0
    const health: Array<number> = []
    const sampling = (async () => {
      for (const end = Date.now() + 4000; Date.now() < end;) {
        loaded = Math.max(loaded, rssMb(gw.pid))
        await new Promise((r) => setTimeout(r, 250))
      }
    })()
    for (const end = Date.now() + 4000; Date.now() < end;) {
      health.push(await healthMs(gw.url))
      await new Promise((r) => setTimeout(r, 500))
    }
    await sampling
    console.log(`RSS ${baseline.toFixed(0)} MB before, peak ${loaded.toFixed(0)} MB with 60 connections that never read; health max ${Math.max(...health).toFixed(0)} ms`)
    // Unbudgeted, each connection pinned most of the 12 MiB timeline (over 500 MB in all).
    expect(loaded - baseline).toBeLessThan(200)
    expect(Math.max(...health)).toBeLessThan(1000)

    // Every slot is taken by a client that does not read...
    const refused = await http("GET", `${gw.url}/v1/tasks/${BIG_TASK}/events/stream?after=${positions[47]}`)
    expect(refused.status).toBe(503)
    // ...until they are disconnected for stalling, SVC_EVENTS_STREAM_STALL_MS after the last byte
    // they took. Waited on as a state: with both cores busy the kernel went on taking bytes of the
    // 12 MiB timeline for about 20 s after the streams opened, and they closed 43 s after (a
    // 20 s stall bound then).
    const closed = () => (gw.output().match(/event stream closed: the client took none of/g) ?? []).length
    await waitFor(`the ${STREAMS} stalled streams to be disconnected`, () => closed() >= STREAMS, {
      timeoutMs: 100_000,
      everyMs: 200,
      seen: () => `disconnected: ${closed()}`
    })
    // A reading client gets a stream again (once the closed streams' slots are given back).
    let status = 0
    const sse = await waitFor("a stream for a reading client", async () => {
      const opened = await openSse(`${gw.url}/v1/tasks/${BIG_TASK}/events/stream?after=${positions[46]}`)
      status = opened.status
      if (status === 200) return opened
      opened.close()
      return undefined
    }, { timeoutMs: 10_000, everyMs: 100, seen: () => `last status: ${status}` })
    try {
      expect((await sse.nextEvent(5000)).id).toBe(positions[47])
    } finally {
      sse.close()
    }
  }, 200_000)

  it("a slow client that keeps reading is not disconnected: it gets every event", async () => {
    const gw = await start({ SVC_EVENTS_STREAM_STALL_MS: "1500" })
    const positions: Array<string> = []
    for (let seq = 1; seq <= 12; seq++) positions.push(await post(gw.url, BIG_TASK, seq, 256 * 1024))
    const { hostname, port } = new URL(gw.url)
    const socket = connect(Number(port), hostname, () =>
      socket.write(`GET /v1/tasks/${BIG_TASK}/events/stream HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`))
    sockets.push(socket)
    let text = ""
    let closed = false
    socket.on("close", () => (closed = true))
    socket.on("error", () => {})
    // About 300 KB/s: one chunk of at most 64 KiB every 200 ms.
    socket.pause()
    const started = Date.now()
    while (!text.includes(`id: ${positions[11]}\n`) && !closed && Date.now() - started < 60_000) {
      await new Promise((r) => setTimeout(r, 200))
      const chunk = socket.read(64 * 1024) ?? socket.read()
      if (chunk !== null) text += chunk.toString("latin1")
    }
    expect(closed).toBe(false)
    expect([...text.matchAll(/^id: ([\d-]+)$/gm)].map((m) => m[1])).toEqual(positions)
    socket.destroy()
  }, 90_000)
})
