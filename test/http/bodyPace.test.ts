/**
 * The minimum body pace (SVC_MIN_BODY_BYTES_PER_SECOND) judges the sender, not the application:
 * an application that pauses the request for each chunk's write (the raw upload's spool on a
 * busy disk) still sees a trickle cut within the 5 s window, and one that does not read at all
 * (its buffer full) does not get a fast sender cut.
 */
import * as http from "node:http"
import * as net from "node:net"
import { describe, expect, it } from "vitest"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"

const MIN_RATE = 16 * 1024

const serve = (onRequest: (req: http.IncomingMessage, res: http.ServerResponse) => void) =>
  new Promise<{ server: http.Server; port: number }>((resolve) => {
    const server = createGatewayServer(4 * 1024 * 1024, { minBodyBytesPerSecond: MIN_RATE })
    server.on("request", onRequest)
    server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as net.AddressInfo).port }))
  })

const close = (server: http.Server) => {
  server.closeAllConnections()
  return new Promise<void>((done) => server.close(() => done()))
}

/** Sends the head declaring `length`, then `send(socket)`; resolves with the answer's status and when. */
const answerTo = (port: number, length: number, send: (socket: net.Socket) => () => void) =>
  new Promise<{ status: number; afterMs: number }>((resolve, reject) => {
    const started = Date.now()
    const socket = net.connect(port, "127.0.0.1")
    let received = ""
    let stop = () => {}
    socket.on("connect", () => {
      socket.write(`POST /up HTTP/1.1\r\nhost: x\r\ncontent-length: ${length}\r\n\r\n`)
      stop = send(socket)
    })
    socket.on("data", (d: Buffer) => {
      received += d.toString("latin1")
      const status = /^HTTP\/1\.1 (\d{3})/.exec(received)
      if (status !== null) {
        stop()
        socket.destroy()
        resolve({ status: Number(status[1]), afterMs: Date.now() - started })
      }
    })
    socket.on("error", (e) => (stop(), reject(e)))
  })

// Both tests wait out the pace's 5 s window on servers of their own: side by side.
describe.concurrent("the body pace", () => {
  it("a trickle is cut though the application pauses the request for each chunk it writes", async () => {
    // 950 ms of every second paused, as a spool whose writes wait for a busy thread pool: a tick
    // that took a pause for the application's slowness restarted the window nearly every time.
    const { server, port } = await serve((req) => {
      req.on("data", () => {
        req.pause()
        setTimeout(() => req.resume(), 950)
      })
    })
    try {
      const answer = await answerTo(port, 1024 * 1024, (socket) => {
        // 4 KiB a second: a quarter of the pace accepted.
        const timer = setInterval(() => socket.write(Buffer.alloc(4096, 0x61)), 1_000)
        return () => clearInterval(timer)
      })
      expect(answer.status).toBe(408)
      expect(answer.afterMs).toBeLessThan(10_000)
    } finally {
      await close(server)
    }
  }, 30_000)

  it("a fast sender is not cut while the application is not reading (its buffer full)", async () => {
    const length = 1024 * 1024
    const { server, port } = await serve((req, res) => {
      req.pause()
      // Eight seconds without reading: past the 5 s window, the sender held back by the buffer.
      setTimeout(() => {
        let got = 0
        req.on("data", (chunk: Buffer) => (got += chunk.length))
        req.on("end", () => res.end(String(got)))
        req.resume()
      }, 8_000)
    })
    try {
      const answer = await answerTo(port, length, (socket) => {
        socket.write(Buffer.alloc(length, 0x61))
        return () => {}
      })
      expect(answer.status).toBe(200)
      expect(answer.afterMs).toBeGreaterThanOrEqual(7_900)
    } finally {
      await close(server)
    }
  }, 30_000)
})
