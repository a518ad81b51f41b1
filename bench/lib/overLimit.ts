/**
 * S3's second half: bodies above the limit must get a 413 without the server holding them.
 * A plain TCP client sends the request head and then the body as fast as the server takes it
 * (declared with Content-Length, or chunked), reading whatever the server answers meanwhile,
 * as an uploading HTTP client does. Resolves with the status the client saw (0: none, e.g.
 * the connection was reset before the answer could be read).
 */
import * as net from "node:net"

const CHUNK = Buffer.alloc(1024 * 1024, 0x61)
const CRLF = Buffer.from("\r\n")

export const postOversized = (port: number, path: string, bytes: number, chunked: boolean): Promise<number> =>
  new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1")
    let settled = false
    let received = ""
    const done = (status: number) => {
      if (settled) return
      settled = true
      socket.destroy()
      resolve(status)
    }
    socket.on("data", (data: Buffer) => {
      received += data.toString("latin1")
      const m = /^HTTP\/1\.1 (\d{3})/.exec(received)
      if (m !== null && m[1] !== "100") done(Number(m[1]))
    })
    socket.on("error", () => done(0))
    socket.on("close", () => done(0))
    socket.on("connect", () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\n` +
          (chunked ? "transfer-encoding: chunked\r\n" : `content-length: ${bytes}\r\n`) + "\r\n"
      )
      let sent = 0
      const pump = () => {
        while (!settled && sent < bytes) {
          sent += CHUNK.length
          // One write per chunk: a short-circuited write would break the chunked framing.
          const ok = socket.write(chunked ? Buffer.concat([Buffer.from(`${CHUNK.length.toString(16)}\r\n`), CHUNK, CRLF]) : CHUNK)
          if (!ok) return void socket.once("drain", pump)
        }
        if (!settled && chunked) socket.write("0\r\n\r\n")
      }
      pump()
    })
    setTimeout(() => done(0), 30_000).unref()
  })
