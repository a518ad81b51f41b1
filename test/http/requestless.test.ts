/**
 * Connections that hold no request, on the built gateway with the keep-alive and header timeouts
 * short (2 s and 1 s: the bound below is their sum and a check of Node's, 3.25 s, looked at every
 * second).
 *
 * - A kept-alive connection that sends bytes but never a request is closed. HTTP/1.1 lets empty
 *   lines precede a request line, Node's keep-alive timeout counts from the last byte read and
 *   its header timeout from a request line's first byte: a client sending "\r\n" every 200 ms
 *   after its first answer held its connection (and a place under the connection cap) for as
 *   long as it went on.
 * - A request asking to upgrade (`Connection: Upgrade`, `Upgrade: h2c` as `curl --http2` sends
 *   it) is served as the HTTP/1.1 request it also is, through the same checks as any other. Node
 *   hands such a request to an `upgrade` listener when one exists, and Effect's server adds one:
 *   past the gateway's own checks, 150 headers were answered 200, and the rule above saw no
 *   request in progress, so an event stream was cut at its bound.
 */
import * as net from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type RunningService, startBuilt } from "../support/process.js"
import { EXPENSE_TASK } from "../support/world.js"

let dir: string
let gw: RunningService
const sockets: Array<net.Socket> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-requestless-"))
  gw = await startBuilt({
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
    SVC_KEEP_ALIVE_TIMEOUT_MS: "2000",
    SVC_HEADERS_TIMEOUT_MS: "1000"
  })
}, 60_000)
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const HEALTH = "GET /v1/health HTTP/1.1\r\nHost: gateway\r\n\r\n"

/**
 * A connection that sends `HEALTH` once, then writes `next(i)` every `everyMs` (i from 0) for up
 * to `forMs`: the answers it got and when (ms after the first answer) it was closed, if it was.
 */
const client = (everyMs: number, forMs: number, next: (i: number) => string) =>
  new Promise<{ answers: number; closedAfterMs: number | undefined }>((resolve, reject) => {
    const { hostname, port } = new URL(gw.url)
    const socket = net.connect(Number(port), hostname)
    sockets.push(socket)
    let received = ""
    let firstAt = 0
    let timer: ReturnType<typeof setInterval> | undefined
    const answers = () => (received.match(/HTTP\/1\.1 200 /g) ?? []).length
    const done = (closedAfterMs: number | undefined) => {
      clearInterval(timer)
      clearTimeout(end)
      socket.destroy()
      resolve({ answers: answers(), closedAfterMs })
    }
    const end = setTimeout(() => done(undefined), forMs)
    socket.setEncoding("latin1")
    socket.on("error", reject)
    socket.on("close", () => done(firstAt === 0 ? 0 : performance.now() - firstAt))
    socket.on("data", (d: string) => {
      received += d
      if (firstAt !== 0 || answers() === 0) return
      firstAt = performance.now()
      let i = 0
      timer = setInterval(() => socket.write(next(i++)), everyMs)
    })
    socket.write(HEALTH)
  })

it.concurrent("empty lines after an answer, and no request: closed after the keep-alive and header timeouts, not held", async () => {
  const { answers, closedAfterMs } = await client(200, 9_000, () => "\r\n")
  expect(answers).toBe(1)
  // Without the bound it is still open when the client stops, 9 s later.
  expect(closedAfterMs).toBeDefined()
  expect(closedAfterMs!).toBeGreaterThan(3_000)
  expect(closedAfterMs!).toBeLessThan(7_000)
}, 20_000)

it.concurrent("a connection that goes on asking is kept, and a request behind empty lines is answered", async () => {
  // Every 400 ms a request, each fourth one behind two empty lines: 20 answers in 8 s, kept alive.
  const { answers, closedAfterMs } = await client(400, 8_000, (i) => (i % 4 === 0 ? "\r\n\r\n" : "") + HEALTH)
  expect(closedAfterMs).toBeUndefined()
  expect(answers).toBeGreaterThanOrEqual(12)
}, 20_000)

const UPGRADE = "Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n"

/** Writes `text` on a connection of its own; what came back within `ms`, and whether it was closed by then. */
const exchange = (text: string, ms: number) =>
  new Promise<{ received: string; closed: boolean }>((resolve, reject) => {
    const { hostname, port } = new URL(gw.url)
    const socket = net.connect(Number(port), hostname)
    sockets.push(socket)
    let received = ""
    let closed = false
    socket.setEncoding("latin1")
    socket.on("data", (d: string) => (received += d))
    socket.on("error", reject)
    socket.on("close", () => (closed = true))
    socket.write(text)
    setTimeout(() => {
      socket.destroy()
      resolve({ received, closed })
    }, ms)
  })

it.concurrent("a request asking for h2c is answered as HTTP/1.1, not switched", async () => {
  const { received } = await exchange(`GET /v1/health HTTP/1.1\r\nHost: gateway\r\n${UPGRADE}\r\n`, 1_000)
  expect(received).toMatch(/^HTTP\/1\.1 200 /)
  expect(received).toContain("{\"status\":\"ok\"}")
})

it.concurrent("its headers are counted as any request's: 150 answer 431", async () => {
  const many = Array.from({ length: 150 }, (_, i) => `X-Pad-${i}: ${i}\r\n`).join("")
  const { received } = await exchange(`GET /v1/health HTTP/1.1\r\nHost: gateway\r\n${UPGRADE}${many}\r\n`, 1_000)
  expect(received).toMatch(/^HTTP\/1\.1 431 /)
})

it.concurrent("its event stream is a request in progress: still open past the bound for connections without one", async () => {
  const { received, closed } = await exchange(
    `GET /v1/tasks/${EXPENSE_TASK}/events/stream HTTP/1.1\r\nHost: gateway\r\nAccept: text/event-stream\r\n${UPGRADE}\r\n`,
    5_000
  )
  expect(received).toMatch(/^HTTP\/1\.1 200 /)
  expect(received).toMatch(/content-type: text\/event-stream/i)
  expect(closed).toBe(false)
}, 15_000)
