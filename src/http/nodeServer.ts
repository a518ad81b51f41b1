/**
 * The Node http.Server the gateway listens on. It enforces the body limit before Effect sees
 * the request: Effect's MaxBodySize destroys the socket (the client never sees an answer), and
 * a 413 sent on a connection that is then closed with body bytes unread is often lost to the
 * reset that follows (bench/PROFILE.md, S3).
 * - A declared Content-Length over the limit: 413 at once, then the rest of the body is read
 *   and discarded (memory stays flat) so the client can read the answer; past a bounded amount
 *   the connection is dropped instead.
 * - A chunked body: counted as it arrives, 413 once it passes the limit, then discarded the
 *   same way.
 *
 * It also holds the server limits (ServerLimits.ts) instead of Node's defaults: time to send the
 * headers and the whole request (408 and close past them), idle keep-alive time, the number of
 * headers (431 past it) and of open connections (a connection past the cap is closed at once).
 * A request target with malformed percent-encoding (path or query) is a 400 here: the router
 * cannot decode such a path, and a query would be decoded leniently (bytes silently replaced).
 * What Node refuses itself (timeouts, unparsable requests, oversized headers) answers in the
 * spec's error shape too.
 *
 * Start and stop: a request that arrives after the port opened but before the application is
 * served answers 503 "Starting up" (only then). Given a Drain (drain.ts), the server's
 * connections and requests are registered with it, so a SIGTERM drains them: every request
 * received is answered, the last answer on each connection with `Connection: close`.
 */
import * as http from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { Drain } from "./drain.js"
import { malformedPercentEncoding } from "./methodNotAllowed.js"
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from "./ServerLimits.js"

const tooLarge = (limit: number) =>
  JSON.stringify({ statusCode: 413, message: `Request body exceeds the ${limit}-byte limit`, error: "Payload Too Large" })

/**
 * Requests whose body the server refused (413 sent) after the application started reading it:
 * the reader stops there instead of handing a cut body to a handler (src/http/jsonInput.ts).
 */
const refusedBodies = new WeakSet<http.IncomingMessage>()
export const bodyRefused = (req: http.IncomingMessage): boolean => refusedBodies.has(req)

/** How much of an oversized body is read and thrown away before the connection is dropped. */
const discardBudget = (limit: number) => Math.max(4 * limit, 64 * 1024 * 1024)

/**
 * An oversized body's answer: 413 at once, then what is `counted` of the rest is thrown away, so
 * the client reads the answer instead of a reset; past the discard budget the connection is
 * dropped. Returns the counter for the bytes thrown away (`already` of them seen).
 */
const answerTooLarge = (req: http.IncomingMessage, res: http.ServerResponse, limit: number, already = 0) => {
  if (!res.headersSent) {
    const body = tooLarge(limit)
    res.writeHead(413, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  }
  let discarded = already
  const budget = discardBudget(limit)
  return (bytes: number) => {
    discarded += bytes
    if (discarded > budget) req.socket.destroy()
  }
}

const capChunkedBody = (req: http.IncomingMessage, res: http.ServerResponse, limit: number) => {
  let seen = 0
  const push = req.push.bind(req)
  // The HTTP parser hands each body chunk to push(); count there, before any reader sees it.
  req.push = (chunk: any, encoding?: BufferEncoding) => {
    if (chunk !== null && chunk !== undefined) {
      seen += chunk.length
      if (seen > limit) {
        // Like a declared oversized body, the rest read and thrown away here (returning true
        // keeps the socket flowing). The body's end still ends the request, marked refused;
        // the connection then serves its next request.
        refusedBodies.add(req)
        const discard = answerTooLarge(req, res, limit, seen - limit)
        req.push = (more: any, enc?: BufferEncoding) => {
          if (more === null || more === undefined) return push(more, enc)
          discard(more.length)
          return true
        }
        return true
      }
    }
    return push(chunk, encoding)
  }
}

const refuseDeclaredBody = (req: http.IncomingMessage, res: http.ServerResponse, limit: number) => {
  const discard = answerTooLarge(req, res, limit)
  req.on("data", (chunk: Buffer) => discard(chunk.length))
}

/**
 * Node calls `end(..., callback)` on 'finish', which never comes once the connection is gone;
 * the platform's response writer waits for that callback in an uninterruptible region, so a
 * client that left before its answer was written kept the request's fiber (and all it holds)
 * alive for good. Here the callback is called on 'close' too (at once when already closed).
 */
const settleEndOnClose = (res: http.ServerResponse) => {
  const end = res.end
  res.end = function(this: http.ServerResponse, ...args: Array<any>) {
    const callback = args[args.length - 1]
    if (typeof callback === "function") {
      let called = false
      const once = (...result: Array<unknown>) => {
        if (called) return
        called = true
        res.off("close", once)
        callback(...result)
      }
      args[args.length - 1] = once
      if (res.destroyed) process.nextTick(once)
      else res.once("close", once)
    }
    return end.apply(this, args as Parameters<typeof end>)
  } as typeof res.end
}

const tooManyHeaders = (max: number) =>
  JSON.stringify({
    statusCode: 431,
    message: `Too many request headers: at most ${max} are accepted`,
    error: "Request Header Fields Too Large"
  })

/**
 * What Node answers itself, before any request handler runs (a timeout, a request it cannot
 * parse, headers over its size limit), in the spec's error shape instead of Node's empty bodies.
 * Like Node's own handler: only on a connection nothing was written to yet, then closed.
 */
const onClientError = (err: NodeJS.ErrnoException, socket: Duplex) => {
  if (err.code === "ECONNRESET" || !socket.writable || (socket as Socket).bytesWritten > 0) {
    socket.destroy()
    return
  }
  const [status, error, message] = err.code === "ERR_HTTP_REQUEST_TIMEOUT"
    ? [408, "Request Timeout", "The request was not received in time"] as const
    : err.code === "HPE_HEADER_OVERFLOW"
    ? [431, "Request Header Fields Too Large", "Request headers exceed the size limit"] as const
    : [400, "Bad Request", "Malformed HTTP request"] as const
  const body = JSON.stringify({ statusCode: status, message, error })
  socket.write(
    `HTTP/1.1 ${status} ${error}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      `connection: close\r\n\r\n${body}`
  )
  // Flush, then close: a client that never closes its side cannot hold the connection.
  socket.end()
  socket.once("finish", () => socket.destroy())
  setTimeout(() => socket.destroy(), 1_000).unref()
}

/** How long without a request before an idle server collects once (`collectWhenIdle`). */
export const IDLE_COLLECT_MS = 10_000

type Collect = () => void

/**
 * One full collection once the server has been idle for `IDLE_COLLECT_MS` after requests, when
 * the process runs with `--expose-gc` (npm start). npm start also turns off V8's memory reducer,
 * whose idle-time collections shrink the heap's growth limit so far that the next burst of
 * uploads ran a mark-compact every second request for seconds (0.50 vs 0.09 per upload, 28 vs
 * 15 ms of CPU each: bench/PROFILE.md); this one plain collection gives a burst's garbage back
 * instead (RSS measured in PROFILE.md) without that. Returns what to call on every request.
 */
export const collectWhenIdle = (
  server: http.Server,
  collect: Collect | undefined = (globalThis as { gc?: Collect }).gc,
  idleMs = IDLE_COLLECT_MS
): (() => void) => {
  if (collect === undefined) return () => {}
  let lastRequestAt = 0
  let collected = true
  const timer = setInterval(() => {
    if (collected || Date.now() - lastRequestAt < idleMs) return
    collected = true
    collect()
  }, Math.max(10, Math.floor(idleMs / 4)))
  timer.unref()
  server.once("close", () => clearInterval(timer))
  return () => {
    lastRequestAt = Date.now()
    collected = false
  }
}

/**
 * How often Node checks the header and request timeouts (it does not time each request: a
 * connection past its timeout is cut at the next check). Node's default is 30 s, which would
 * let a 10 s header timeout run to 40 s; a quarter of the shorter timeout, within 50 ms..1 s.
 */
export const checkingIntervalMs = (limits: ServerLimits): number =>
  Math.min(1000, Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)))

const unavailable = (message: string) => JSON.stringify({ statusCode: 503, message, error: "Service Unavailable" })

/**
 * The gateway's Node server. `limits` defaults to DEFAULT_SERVER_LIMITS field by field; main.ts
 * passes the settings read with `serverLimitsConfig`, and the process's `drain`.
 */
export const createGatewayServer = (
  maxBodyBytes: number,
  limits: Partial<ServerLimits> = {},
  drain?: Drain
): http.Server => {
  const settings: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...limits }
  const server = http.createServer({
    headersTimeout: settings.headersTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(settings)
  })
  server.keepAliveTimeout = settings.keepAliveTimeoutMs
  // Node drops headers past its maxHeadersCount silently (Host among them, when it comes last:
  // then a 400 for a missing Host). So Node keeps them all, bounded by its header size limit
  // (16 KiB: 431 above it), and the count is checked below: too many answer 431.
  server.maxHeadersCount = 0
  server.maxConnections = settings.maxConnections
  server.on("clientError", onClientError)
  drain?.track(server)
  const noteRequest = collectWhenIdle(server)
  // Whether the application was ever attached: before, a request is early ("starting up");
  // after (its handler detached at shutdown), late.
  let served = false
  server.on("newListener", (event: string | symbol) => {
    if (event === "request") served = true
  })
  const emit = server.emit.bind(server) as (event: string, ...args: Array<any>) => boolean
  server.emit = ((event: string, ...args: Array<any>) => {
    if (event === "request") {
      noteRequest()
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse]
      settleEndOnClose(res)
      drain?.admit(res)
      if (req.rawHeaders.length / 2 > settings.maxHeaders) {
        const body = tooManyHeaders(settings.maxHeaders)
        res.writeHead(431, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
        res.end(body)
        return true
      }
      const target = req.url ?? "/"
      const malformed = malformedPercentEncoding(target)
      if (malformed !== undefined) {
        const query = target.indexOf("?")
        const where = query !== -1 && target.indexOf(malformed.replace(/…$/, "")) > query ? "query string" : "path"
        const body = JSON.stringify({
          statusCode: 400,
          message: `Malformed request ${where}: invalid percent-encoding ${
            JSON.stringify(malformed)
          } (expected %XX escapes of UTF-8 bytes)`,
          error: "Bad Request"
        })
        res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        res.end(body)
        return true
      }
      // Listening but not serving: answer rather than leave the request hanging. Before the
      // application is attached that is start-up; after, shutdown (a drain closes connections
      // before the application is detached, so this is for servers run without one).
      if (server.listenerCount("request") === 0) {
        if (served) {
          res.writeHead(503, { "content-type": "application/json", connection: "close" })
          res.end(unavailable("Shutting down"))
        } else {
          res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
          res.end(unavailable("Starting up; retry shortly"))
        }
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
