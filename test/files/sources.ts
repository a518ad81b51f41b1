/** The allow-listed source server's routes, shared by the url provider tests. */
import type * as http from "node:http"
import { randomBytes } from "node:crypto"

export const PAYLOAD = randomBytes(100 * 1024)
export const HUGE_TOTAL = 64 * 1024 * 1024

/** What the /huge route managed to send before the client hung up. */
export const hugeProgress = { written: 0, closed: false, finished: false }
/** Whether the /slow route saw its client go away. */
export const slowProgress = { closed: false }

export const sourceHandler: http.RequestListener = (req, res) => {
  const url = new URL(req.url ?? "/", "http://source")
  const p = url.pathname
  const chain = /^\/chain\/(\d+)\/(.*)$/.exec(p)
  if (chain !== null) {
    const n = Number(chain[1])
    if (n > 0) {
      res.writeHead(302, { location: `/chain/${n - 1}/${chain[2]}` })
      res.end()
    } else {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end("landed")
    }
    return
  }
  switch (p) {
    case "/files/r%C3%A9sum%C3%A9.pdf":
      res.writeHead(200, { "content-type": "application/pdf", "content-length": PAYLOAD.length })
      res.end(PAYLOAD)
      return
    case "/cd-star":
      res.writeHead(200, {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.csv`
      })
      res.end("a,b\n1,2\n")
      return
    case "/cd-plain":
      res.writeHead(200, { "content-disposition": `attachment; filename="report \\"q1\\".xlsx"` })
      res.end("xlsx")
      return
    case "/cd-utf8":
      // Raw UTF-8 in a plain filename (not RFC 6266's filename*, but common): Node writes each
      // character of the header string as one byte.
      res.writeHead(200, { "content-disposition": `attachment; filename="${Buffer.from("résumé 📄.pdf").toString("latin1")}"` })
      res.end("pdf")
      return
    case "/cd-latin1":
      res.writeHead(200, { "content-disposition": `attachment; filename="caf\u00e9.txt"` })
      res.end("txt")
      return
    case "/cd-path":
      res.writeHead(200, { "content-disposition": `attachment; filename="../../etc/passwd"` })
      res.end("not passwd")
      return
    case "/":
      res.writeHead(200, { "content-type": "application/x-custom" })
      res.end("root")
      return
    case "/noext/data":
      res.writeHead(200, { "content-type": "image/png" })
      res.end(PAYLOAD.subarray(0, 10))
      return
    case "/empty.txt":
      res.writeHead(200)
      res.end()
      return
    case "/to": {
      res.writeHead(Number(url.searchParams.get("status") ?? "302"), { location: url.searchParams.get("loc") ?? "/" })
      res.end()
      return
    }
    case "/no-location":
      res.writeHead(302)
      res.end()
      return
    case "/echo-headers":
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(req.headers))
      return
    case "/slow": {
      // Headers at once, then one byte every 50 ms, forever.
      res.writeHead(200, { "content-type": "text/plain" })
      const t = setInterval(() => res.write("."), 50)
      res.on("close", () => {
        clearInterval(t)
        slowProgress.closed = true
      })
      return
    }
    case "/stall":
      // Never answers.
      return
    case "/huge": {
      // Chunked (no Content-Length), 16 KiB at a time, honoring backpressure, up to 64 MiB.
      hugeProgress.written = 0
      hugeProgress.closed = false
      hugeProgress.finished = false
      res.writeHead(200, { "content-type": "application/octet-stream" })
      const chunk = Buffer.alloc(16 * 1024, 0x61)
      const pump = () => {
        while (hugeProgress.written < HUGE_TOTAL && !res.destroyed) {
          hugeProgress.written += chunk.length
          if (!res.write(chunk)) {
            res.once("drain", pump)
            return
          }
        }
        if (!res.destroyed) {
          hugeProgress.finished = true
          res.end()
        }
      }
      res.on("close", () => {
        hugeProgress.closed = true
      })
      pump()
      return
    }
    case "/declared-huge":
      res.writeHead(200, { "content-length": String(HUGE_TOTAL) })
      res.write("x")
      return
    case "/truncated":
      res.writeHead(200, { "content-length": "100" })
      res.write("0123456789", () => res.destroy())
      return
    default: {
      const status = /^\/status\/(\d{3})$/.exec(p)
      res.writeHead(status !== null ? Number(status[1]) : 404)
      res.end("nope")
    }
  }
}
