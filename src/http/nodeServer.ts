/**
 * The Node http.Server the gateway listens on. It caps chunked request bodies itself: Effect's
 * MaxBodySize would destroy the socket, so the client would never see an answer. Bodies with
 * a Content-Length are checked before reading by the api middleware instead.
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

export const createGatewayServer = (maxBodyBytes: number): http.Server => {
  const server = http.createServer()
  const emit = server.emit.bind(server) as (event: string, ...args: Array<any>) => boolean
  server.emit = ((event: string, ...args: Array<any>) => {
    if (event === "request") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse]
      if (req.headers["content-length"] === undefined && req.headers["transfer-encoding"] !== undefined) {
        capChunkedBody(req, res, maxBodyBytes)
      }
    }
    return emit(event, ...args)
  }) as typeof server.emit
  return server
}
