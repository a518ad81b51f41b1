/**
 * A kept-alive connection that sends bytes but never a request is closed. HTTP/1.1 lets empty
 * lines precede a request line, Node's keep-alive timeout counts from the last byte read and its
 * header timeout from a request line's first byte: a client sending "\r\n" every 200 ms after
 * its first answer held its connection (and a place under the connection cap) for as long as it
 * went on. The built gateway, with the keep-alive and header timeouts short (2 s and 1 s; the
 * bound is their sum and a check of Node's, 3.25 s, looked at every second).
 */
import * as net from "node:net"
import { afterAll, beforeAll, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type RunningService, startBuilt } from "../support/process.js"

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
