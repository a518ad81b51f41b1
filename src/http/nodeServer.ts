/**
 * The Node http.Server the gateway listens on. It enforces the body limit before Effect sees
 * the request: Effect's MaxBodySize destroys the socket (the client never sees an answer), and
 * a 413 sent on a connection that is then closed with body bytes unread is often lost to the
 * reset that follows (bench/PROFILE.md, S3).
 * - A declared Content-Length over the limit: 413 at once, then the rest of the body is read
 *   and discarded (memory stays flat) so the client can read the answer; past a bounded amount
 *   the connection is dropped instead.
 * - A chunked body: counted as it arrives, 413 once it passes the limit.
 */
import * as http from "node:http"

const tooLarge = (limit: number) =>
  JSON.stringify({ statusCode: 413, message: `Request body exceeds the ${limit}-byte limit`, error: "Payload Too Large" })

const capChunkedBody = (req: http.IncomingMessage, res: http.ServerResponse, limit: number) => {
  let seen = 0
  const push = req.push.bind(req)
  // The HTTP parser hands each body chunk to push(); count there, before any reader sees it.
  req.push = (chunk: any, encoding?: BufferEncoding) => {
    if (chunk !== null && chunk !== undefined) {
      seen += chunk.length
      if (seen > limit) {
        req.push = () => false
        if (!res.headersSent) {
          res.writeHead(413, { "content-type": "application/json", connection: "close" })
          res.end(tooLarge(limit))
        }
        return false
      }
    }
    return push(chunk, encoding)
  }
}

/** How much of an oversized body is read and thrown away before the connection is dropped. */
const discardBudget = (limit: number) => Math.max(4 * limit, 64 * 1024 * 1024)

const refuseDeclaredBody = (req: http.IncomingMessage, res: http.ServerResponse, limit: number) => {
  const body = tooLarge(limit)
  res.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
  res.end(body)
  let discarded = 0
  const budget = discardBudget(limit)
  req.on("data", (chunk: Buffer) => {
    discarded += chunk.length
    if (discarded > budget) req.socket.destroy()
  })
}

export const createGatewayServer = (maxBodyBytes: number): http.Server => {
  const server = http.createServer()
  const emit = server.emit.bind(server) as (event: string, ...args: Array<any>) => boolean
  server.emit = ((event: string, ...args: Array<any>) => {
    if (event === "request") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse]
      // Listening but not yet serving (start-up): answer rather than leave the request hanging.
      if (server.listenerCount("request") === 0) {
        res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
        res.end(JSON.stringify({ statusCode: 503, message: "Starting up; retry shortly", error: "Service Unavailable" }))
        return true
      }
      const declared = req.headers["content-length"]
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        refuseDeclaredBody(req, res, maxBodyBytes)
        return true
      }
      if (declared === undefined && req.headers["transfer-encoding"] !== undefined) {
        capChunkedBody(req, res, maxBodyBytes)
      }
    }
    return emit(event, ...args)
  }) as typeof server.emit
  return server
}
