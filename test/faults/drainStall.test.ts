/**
 * SIGTERM with clients that stopped sending a request partway, on the built gateway and real
 * sockets (src/http/server/Drain.ts STALLED_MS): before, one such client held every drain for the
 * whole grace period and made the exit 1 (bodies up to 64 KiB have no pace; the request timeout
 * is 60 s). A client still sending, however slowly, and one the server itself holds back
 * (`Expect: 100-continue` waiting on the body budget) are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { exitWithin, http as json, type RunningService, startService } from "../support/process.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

let dir: string
const running: Array<RunningService> = []
const sockets: Array<net.Socket> = []
let dbCount = 0

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gateway-faults-drain-stall-"))
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await Promise.all(running.map((s) => s.stop()))
  rmSync(dir, { recursive: true, force: true })
})

const boot = async (db: string, env: Record<string, string> = {}) => {
  const service = await startService({ SVC_SEED_FILE: FIXTURE, SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: db, SVC_TENANT_SLUG: "acme", ...env })
  running.push(service)
  return service
}

const start = async (env: Record<string, string>) => {
  const db = `file:${join(dir, `drain-${++dbCount}.db`)}`
  const service = await boot(db, env)
  const created = await json("POST", `${service.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(created.status).toBe(201)
  return { gw: service, db, taskId: created.body.id as string, port: Number(new URL(service.url).port) }
}

const connect = (port: number) => {
  const socket = net.connect(port, "127.0.0.1")
  sockets.push(socket)
  let answer = ""
  let closedAt: number | undefined
  socket.on("data", (d) => (answer += d))
  socket.on("error", () => {})
  socket.on("close", () => (closedAt = performance.now()))
  return { socket, answer: () => answer, closedAt: () => closedAt }
}

const eventBody = (seq: number, pad: number) =>
  Buffer.from(JSON.stringify({ type: "drain.stall", source: "faults", seq, payload: { pad: "x".repeat(pad) } }))

const head = (taskId: string, length: number, extra = "") =>
  `POST /v1/tasks/${taskId}/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n${extra}\r\n`

/** Writes `body` in `pieces` pieces, one every `everyMs`; resolves after the last. */
const feed = (socket: net.Socket, body: Buffer, pieces: number, everyMs: number) =>
  new Promise<void>((resolve) => {
    const step = Math.ceil(body.length / pieces)
    let sent = 0
    const timer = setInterval(() => {
      if (socket.destroyed) {
        clearInterval(timer)
        return resolve()
      }
      socket.write(body.subarray(sent, sent + step))
      sent += step
      if (sent >= body.length) {
        clearInterval(timer)
        resolve()
      }
    }, everyMs)
  })

/** The test's events stored on `db`, read back through a gateway started on it again. */
const storedSeqs = async (db: string, taskId: string) => {
  const again = await boot(db)
  const page = await json("GET", `${again.url}/v1/tasks/${taskId}/events?limit=500`)
  await again.stop()
  return (page.body.events as Array<any>).filter((e) => e.type === "drain.stall").map((e) => e.seq as number).sort()
}

// Each test has its own gateway: they wait side by side.
describe.concurrent("SIGTERM and clients that stopped sending partway", { timeout: 60_000 }, () => {
  it("a stalled body and stalled headers are closed about 2 s in; a body fed every 500 ms is answered and stored; exit 0", async () => {
    const { gw, db, taskId, port } = await start({ SVC_SHUTDOWN_GRACE_MS: "10000" })
    const stalledBody = eventBody(1, 100)
    // Stalled: its headers and 10 bytes of its body, then nothing.
    const body = connect(port)
    body.socket.write(head(taskId, stalledBody.length) + stalledBody.subarray(0, 10).toString())
    // Stalled in its headers.
    const headers = connect(port)
    headers.socket.write(`POST /v1/tasks/${taskId}/events HTTP/1.1\r\nHost: x\r\nContent-Ty`)
    // Slow but alive: a piece every 500 ms for 4 s, longer than the stall bound.
    const slowBody = eventBody(2, 100)
    const slow = connect(port)
    slow.socket.write(head(taskId, slowBody.length))
    const fed = feed(slow.socket, slowBody, 8, 500)
    await new Promise((r) => setTimeout(r, 300))
    const signalAt = performance.now()
    gw.kill("SIGTERM")
    const exit = await exitWithin(gw, 9_000)
    await fed
    expect(exit.code, gw.output()).toBe(0)
    for (const stalled of [body, headers]) {
      expect(stalled.closedAt(), "the stalled connection was closed").toBeDefined()
      expect(stalled.closedAt()! - signalAt).toBeGreaterThan(1_500)
      expect(stalled.closedAt()! - signalAt).toBeLessThan(5_000)
      expect(stalled.answer()).toBe("")
    }
    expect(slow.answer()).toMatch(/^HTTP\/1\.1 200 /)
    expect(slow.answer().toLowerCase()).toContain("connection: close")
    expect(gw.output()).toMatch(/drained in \d+ ms; closed 2 connections on which a request stopped arriving partway/)
    // What was answered is stored, and only that.
    expect(await storedSeqs(db, taskId)).toEqual([2])
  })

  it("empty lines every 300 ms, which begin no request, are no progress: closed about 2 s in, exit 0", async () => {
    const { gw, port } = await start({ SVC_SHUTDOWN_GRACE_MS: "10000" })
    // A kept-alive connection after its answer, and a new one: each sends "\r\n" every 300 ms.
    const clients = [connect(port), connect(port)]
    clients[0]!.socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    const timers = clients.map((c) => setInterval(() => c.socket.destroyed || c.socket.write("\r\n"), 300))
    try {
      await new Promise((r) => setTimeout(r, 400))
      const signalAt = performance.now()
      gw.kill("SIGTERM")
      // Before, they held it for the 10 s grace period and the exit was 1.
      const exit = await exitWithin(gw, 9_000)
      expect(exit.code, gw.output()).toBe(0)
      for (const client of clients) {
        expect(client.closedAt(), "the connection was closed").toBeDefined()
        expect(client.closedAt()! - signalAt).toBeGreaterThan(1_500)
        expect(client.closedAt()! - signalAt).toBeLessThan(5_000)
      }
      expect(clients[0]!.answer()).toMatch(/^HTTP\/1\.1 200 /)
      expect(clients[1]!.answer()).toBe("")
    } finally {
      for (const t of timers) clearInterval(t)
    }
  })

  it("a body the server holds back (Expect: 100-continue, its client's budget share full) is not a stall: answered after the wait, exit 0", async () => {
    const { gw, db, taskId, port } = await start({
      SVC_SHUTDOWN_GRACE_MS: "12000",
      SVC_MAX_BODY_BYTES_PER_CLIENT: "100000",
      SVC_BODY_BUDGET_WAIT_MS: "9000",
      SVC_MIN_BODY_BYTES_PER_SECOND: "0"
    })
    // The first holds the client's share (90 kB > 64 KiB) and sends it over about 4 s.
    const firstBody = eventBody(3, 90_000)
    const first = connect(port)
    first.socket.write(head(taskId, firstBody.length))
    const fed = feed(first.socket, firstBody, 10, 400)
    await new Promise((r) => setTimeout(r, 200))
    // The second waits for its 100 Continue until the first is answered.
    const secondBody = eventBody(4, 90_000)
    const second = connect(port)
    second.socket.on("data", (d) => {
      if (String(d).startsWith("HTTP/1.1 100")) second.socket.write(secondBody)
    })
    second.socket.write(head(taskId, secondBody.length, "Expect: 100-continue\r\n"))
    await new Promise((r) => setTimeout(r, 200))
    expect(second.answer()).toBe("")
    gw.kill("SIGTERM")
    const exit = await exitWithin(gw, 11_000)
    await fed
    expect(exit.code, gw.output()).toBe(0)
    expect(first.answer()).toMatch(/^HTTP\/1\.1 200 /)
    expect(second.answer()).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
    expect(gw.output()).not.toMatch(/stopped arriving/)
    expect(await storedSeqs(db, taskId)).toEqual([3, 4])
  })
})
