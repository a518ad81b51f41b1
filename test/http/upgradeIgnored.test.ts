/**
 * A request asking to upgrade (`Connection: Upgrade`, `Upgrade: h2c` as `curl --http2` sends it)
 * is served as the HTTP/1.1 request it also is, through the same checks as any other. Node hands
 * such a request to an `upgrade` listener when one exists, and Effect's server adds one: past the
 * gateway's own checks, 150 headers were answered 200, and the connection rules saw no request in
 * progress, so an event stream was cut at the bound for connections that begin no request. The
 * built gateway, with the keep-alive and header timeouts short (2 s and 1 s: that bound 3.25 s).
 */
import * as net from "node:net"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"
import { EXPENSE_TASK } from "../support/world.js"

let dir: string
let gw: RunningService
const sockets: Array<net.Socket> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-upgrade-"))
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
