/**
 * The Node http.Server the gateway (and the workspace service) listens on: the request body's
 * limits, the server limits (ServerLimits.ts) and flood defences are enforced here, before Effect
 * sees a request, answering in the spec's error shape. Effect's MaxBodySize fails the read
 * without an answer in our shape, and a 413 sent on a connection then closed with body bytes
 * unread is often lost to the reset that follows (bench/PROFILE.md, S3). What it does, on
 * `createGatewayServer`.
 */
import * as http from "node:http"
import { GatewayResponse } from "./response.js"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import { absoluteFormPath } from "../../api/linkPath.js"
import { bodyBytesDone } from "../../lib/bufferRelease.js"
import { stampArrival } from "./arrival.js"
import { BodyBudget, SMALL_BODY_BYTES } from "./BodyBudget.js"
import { addressBucket, clientAddress, type ClientAddressSettings, clientKey } from "./clientAddress.js"
import type { Drain } from "./Drain.js"
import { malformedPercentEncoding } from "../errors/percentEncoding.js"
import { DEFAULT_SERVER_LIMITS, PROBE_RESERVE, type ServerLimits } from "./ServerLimits.js"
import { errorJson } from "../errors/errorBody.js"
import { RETRY_AFTER_SECONDS } from "../errors/errorResponse.js"
import { noteAccepted } from "../../lib/acceptedConnections.js"
import { type EarlyAnswer, expectationFailed, hostRefusal, isContinueOnly } from "./hostAndExpect.js"
import { reducingCollection } from "../../lib/reducingCollection.js"

/** An answer the server gives before the application sees the request. */
interface Refusal {
  readonly status: number
  readonly body: string
  readonly headers?: Record<string, string>
}

const tooLarge = (limit: number, streamed = false): Refusal => ({
  status: 413,
  body: errorJson(
    413,
    "Payload Too Large",
    // A streamed body is a file (the raw upload): named as such, like the application's own 413.
    streamed ? `body: the file exceeds the ${limit}-byte limit (SVC_MAX_BODY_BYTES)` : `Request body exceeds the ${limit}-byte limit`
  )
})

/** Every 503 of the server says the same Retry-After as the application's (README "Errors"). */
const busy = (): Refusal => ({
  status: 503,
  body: errorJson(
    503,
    "Service Unavailable",
    `Too many request bodies in progress (SVC_MAX_BODY_BYTES_IN_FLIGHT, SVC_MAX_BODY_BYTES_PER_CLIENT); retry after ${RETRY_AFTER_SECONDS} s`
  ),
  headers: { "retry-after": RETRY_AFTER_SECONDS }
})

/** Who a request counts against for the per-client shares (the body budget, the event streams). */
const requestClient = (req: http.IncomingMessage, settings: ClientAddressSettings) =>
  addressBucket(clientAddress(req.socket.remoteAddress, req.headers as Record<string, string | undefined>, settings))

/** The window over which a body's pace is judged (SVC_MIN_BODY_BYTES_PER_SECOND), in seconds. */
const RATE_WINDOW_S = 5

/**
 * Cuts a body that arrives slower than `minRate` bytes per second over the last RATE_WINDOW_S
 * seconds (judged from RATE_WINDOW_S after it was admitted): 408 when nothing was answered yet,
 * then the connection is closed, and what the body held of the budget is given back at once.
 */
const watchBodyPace = (req: http.IncomingMessage, res: http.ServerResponse, minRate: number) => {
  if (minRate <= 0) return
  const socket = req.socket
  const seen = [socket.bytesRead]
  const timer = setInterval(() => {
    if (req.complete || res.writableEnded || socket.destroyed) return clearInterval(timer)
    // The application not reading is not the sender's slowness: with the request's buffer full
    // the parser stops reading the socket, and the window starts again. A pause alone does not
    // hold the sender back (the buffer still takes its bytes): counting it let a trickle written
    // to a spool (paused for each chunk's write) on a busy disk run 24 s instead of 6.
    if (req.readableLength >= req.readableHighWaterMark) seen.length = 0
    seen.push(socket.bytesRead)
    if (seen.length <= RATE_WINDOW_S) return
    const arrived = seen[seen.length - 1]! - seen[seen.length - 1 - RATE_WINDOW_S]!
    if (arrived >= minRate * RATE_WINDOW_S) return
    clearInterval(timer)
    refusedBodies.add(req)
    if (!res.headersSent) {
      const body = errorJson(
        408,
        "Request Timeout",
        `The request body arrived at ${Math.round(arrived / RATE_WINDOW_S)} bytes/s over ${RATE_WINDOW_S} s, below the ` +
          `${minRate} bytes/s accepted (SVC_MIN_BODY_BYTES_PER_SECOND)`
      )
      res.writeHead(408, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
      res.end(body, () => socket.destroy())
      setTimeout(() => socket.destroy(), 1_000).unref()
    } else socket.destroy()
    refuseBody(req) // after the answer: a reader that stops must find it sent
  }, 1_000)
  timer.unref()
  res.once("close", () => clearInterval(timer))
}

/**
 * Requests whose body the server refused (413 or 503 sent) after the application started reading
 * it: the reader stops there instead of handing a cut body to a handler (src/http/input/jsonInput.ts).
 */
const refusedBodies = new WeakSet<http.IncomingMessage>()
export const bodyRefused = (req: http.IncomingMessage): boolean => refusedBodies.has(req)

/**
 * Emitted on a request whose body the server refused (413, 503 or 408 sent) once its reader may
 * have started: a reader stops at it (or at `end`, then `bodyRefused`). Waiting for `end` or
 * `close` alone was not enough: once the refusal's answer finishes, Node no longer aborts the
 * request when its client leaves, so the reader, its fiber and the chunks it had read stayed for
 * the life of the process (each chunked body refused at 4 MiB kept 4 MiB). The stream itself is
 * not ended early: Node would take that for an abort and reset the connection before the client
 * read the answer.
 */
export const BODY_REFUSED: unique symbol = Symbol("gateway/bodyRefused")

const refuseBody = (req: http.IncomingMessage) => {
  refusedBodies.add(req)
  req.emit(BODY_REFUSED)
}

/** How much of a refused body is read and thrown away before the connection is dropped. */
const discardBudget = (limit: number) => Math.max(4 * limit, 64 * 1024 * 1024)

/** How long a connection closing after a refused body's answer waits for more bytes of it. */
const LINGER_IDLE_MS = 2_000

/**
 * When the answer closes the connection (HTTP/1.0, `Connection: close`, a drain), Node closes it
 * as soon as the answer is written; the body's rest then arrives at a closed socket, the kernel
 * resets the connection, and a client still sending (one that reads only once its body is out)
 * never saw the answer: an 8 MiB body refused at 2 MiB got EPIPE every time, no 413. Instead the
 * answer is followed by a half-close and the rest is read and thrown away as on a kept
 * connection, until the client closes its side, nothing more comes for LINGER_IDLE_MS, or the
 * discard budget is passed.
 */
const lingerOnClose = (socket: Socket) => {
  socket.destroySoon = function(this: Socket) {
    if (this.writable) this.end()
    this.setTimeout(LINGER_IDLE_MS, () => this.destroy())
  }
}

/**
 * A refused body's answer, at once; then what is `counted` of the rest is thrown away, so the
 * client reads the answer instead of a reset; past the discard budget the connection is dropped.
 * Returns the counter for the bytes thrown away (`already` of them seen).
 */
const answerAndDiscard = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  refusal: Refusal,
  limit: number,
  already = 0
) => {
  if (!res.headersSent) {
    // Set one by one (not as writeHead's argument): so they can be read back (the request log
    // tells a 503 with Retry-After, load shed on purpose, from a failure).
    for (const [name, value] of Object.entries(refusal.headers ?? {})) res.setHeader(name, value)
    res.setHeader("content-type", "application/json")
    res.setHeader("content-length", Buffer.byteLength(refusal.body))
    res.writeHead(refusal.status)
    lingerOnClose(req.socket as Socket)
    res.end(refusal.body)
  }
  let discarded = already
  const budget = discardBudget(limit)
  return (bytes: number) => {
    discarded += bytes
    bodyBytesDone(bytes) // thrown away: dead at once
    if (discarded > budget) req.socket.destroy()
  }
}

/**
 * A chunked body: counted as it arrives, against the body limit (413 past it) and against the
 * bytes in flight (503 when a chunk does not fit; what it took is given back when the response
 * closes). Either way the rest is read and thrown away. False when it was refused at once: what
 * had arrived before the count began (a request handled on a later turn, in a drain) was past
 * the limit or the budget.
 */
const capChunkedBody = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  limit: number,
  /** Undefined for a streamed body: only the limit and the pace hold. */
  budget: BodyBudget | undefined,
  client: string,
  minRate: number,
  drain: Drain | undefined,
  /** Called before an answer given at once (the application then never sees the request). */
  ownAnswer: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined
): boolean => {
  let seen = 0
  let taken = 0
  let watched = false
  res.once("close", () => budget?.release(taken, client))
  const push = req.push.bind(req)
  /** While the bytes before the count are counted: a refusal then is the request's only answer. */
  let early = false
  const answer = (refusal: Refusal, already: number) => {
    // Like a declared refused body, the rest read and thrown away here (returning true keeps the
    // socket flowing). Its reader stops at once (BODY_REFUSED); once the parser has read the
    // rest, the connection serves its next request.
    const discard = answerAndDiscard(req, res, refusal, limit, already)
    req.push = (more: any, enc?: BufferEncoding) => {
      if (more === null || more === undefined) return push(more, enc)
      discard(more.length)
      return true
    }
    refuseBody(req)
  }
  const refuse = (refusal: Refusal, already: number): boolean => {
    if (early) ownAnswer?.(req, res)
    if (early || drain?.draining !== true) {
      answer(refusal, already)
      return false
    }
    // In a drain, refused as Node parses a read: requests pipelined behind this body in the same
    // read are not admitted yet, and the closing answer is decided as its headers go out (the
    // last request admitted on the connection): this answer would close it, and those behind it
    // would be read and never answered. So it goes out on the next turn, once the whole read has
    // been parsed. Meanwhile the body's bytes are thrown away and its end is held back: its
    // reader sees neither a cut body nor an end before it is told the body was refused.
    let held = already
    let ended = false
    req.push = (more: any) => {
      if (more === null || more === undefined) ended = true
      else {
        held += more.length
        bodyBytesDone(more.length)
      }
      return true
    }
    setImmediate(() => {
      answer(refusal, held)
      if (ended) push(null)
    })
    return false
  }
  /** `bytes` more of the body: false when that refused it. */
  const count = (bytes: number): boolean => {
    seen += bytes
    if (seen > limit) return refuse(tooLarge(limit, budget === undefined), seen - limit)
    // Chunks do not wait: a body already arriving is not held back for others. The first
    // SMALL_BODY_BYTES are taken regardless, as for a declared small body.
    if (budget === undefined) {
      if (!watched && seen > SMALL_BODY_BYTES) {
        watched = true
        watchBodyPace(req, res, minRate)
      }
      return true
    }
    if (seen <= SMALL_BODY_BYTES) budget.force(bytes, client)
    else if (!budget.tryTake(bytes, true, client)) return refuse(busy(), bytes)
    else if (!watched) {
      // Past the small size, its pace counts: a trickle would hold what it took.
      watched = true
      watchBodyPace(req, res, minRate)
    }
    taken += bytes
    return true
  }
  // The HTTP parser hands each body chunk to push(); count there, before any reader sees it.
  req.push = (chunk: any, encoding?: BufferEncoding) => {
    if (chunk !== null && chunk !== undefined && !count(chunk.length)) return true
    return push(chunk, encoding)
  }
  // Chunks of the read that brought the headers, pushed before this: up to a read (64 KiB) more.
  if (req.readableLength === 0) return true
  early = true
  const counted = count(req.readableLength)
  early = false
  return counted
}

const refuseDeclaredBody = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  refusal: Refusal,
  limit: number
) => {
  const discard = answerAndDiscard(req, res, refusal, limit)
  req.on("data", (chunk: Buffer) => discard(chunk.length))
}

/**
 * A declared body's bytes are reserved before the application sees the request (`proceed`);
 * when they do not fit, the request waits (its body unread, so Node stops reading the socket
 * once its buffer is full), then answers 503 with Retry-After. Given back when the response closes.
 */
const admitDeclaredBody = (
  req: http.IncomingMessage,
  res: http.ServerResponse,
  bytes: number,
  budget: BodyBudget,
  settings: ServerLimits,
  limit: number,
  proceed: () => void,
  ownAnswer: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined
) => {
  const client = requestClient(req, settings.clientAddress)
  if (bytes <= SMALL_BODY_BYTES) {
    budget.force(bytes, client)
    res.once("close", () => budget.release(bytes, client))
    return proceed()
  }
  const cancel = budget.take(bytes, settings.bodyBudgetWaitMs, () => {
    res.once("close", () => budget.release(bytes, client))
    watchBodyPace(req, res, settings.minBodyBytesPerSecond)
    proceed()
  }, () => {
    ownAnswer?.(req, res)
    refuseDeclaredBody(req, res, busy(), limit)
  }, client)
  // The client left while waiting: it gives up its place, and its request is logged (499) like
  // any the client abandons.
  res.once("close", () => {
    if (cancel()) ownAnswer?.(req, res)
  })
}

/**
 * At most `max` open connections per client address (clientAddress.ts); one past it is closed
 * as soon as it is accepted, like a connection past SVC_MAX_CONNECTIONS.
 */
const limitPerClient = (server: http.Server, max: number) => {
  const open = new Map<string, number>()
  server.on("connection", (socket: Socket) => {
    const key = clientKey(socket.remoteAddress)
    const n = (open.get(key) ?? 0) + 1
    if (n > max) {
      socket.destroy()
      return
    }
    open.set(key, n)
    socket.once("close", () => {
      const left = open.get(key)! - 1
      if (left === 0) open.delete(key)
      else open.set(key, left)
    })
  })
}

/**
 * The connections accepted past `cap` (Node's own cap is `cap + reserve`): marked, so that only
 * the probes are served on them (each then closed after its answer). Returns the mark.
 */
/** A connection in the probes' reserve must have sent a whole request within this (at most). */
const PROBE_REQUEST_WITHIN_MS = 1_000

const reserveForProbes = (
  server: http.Server,
  cap: number,
  reserve: number,
  requestWithinMs: number,
  requested: WeakSet<Socket>
): WeakSet<Socket> => {
  const reserved = new WeakSet<Socket>()
  if (reserve === 0) return reserved
  let open = 0
  // The reserved connections, oldest first: when a new one comes with the reserve full (Node lets
  // one more in), the oldest that has sent no whole request makes room. A flood of silent
  // connections then cannot keep a probe out of the reserve, even for the second it may wait.
  const inReserve = new Set<Socket>()
  server.on("connection", (socket: Socket) => {
    if (socket.destroyed) return // refused by the per-client cap
    open++
    socket.once("close", () => open--)
    if (open <= cap) return
    if (inReserve.size >= reserve) {
      const idle = [...inReserve].find((s) => !requested.has(s))
      if (idle === undefined) {
        socket.destroy()
        return
      }
      inReserve.delete(idle)
      idle.destroy()
    }
    inReserve.add(socket)
    socket.once("close", () => inReserve.delete(socket))
    reserved.add(socket)
    // A probe sends its whole request at once: a reserved connection still without one after a
    // second (a slow-loris holding the reserve) is closed.
    const timer = setTimeout(() => {
      if (!requested.has(socket)) socket.destroy()
    }, requestWithinMs)
    timer.unref()
    socket.once("close", () => clearTimeout(timer))
  })
  return reserved
}

/**
 * Closes a connection that has not sent a byte `ms` after it opened: a flood of silent sockets
 * holds the connection cap for that long, not for the whole header timeout.
 */
const closeSilent = (server: http.Server, ms: number) => {
  server.on("connection", (socket: Socket) => {
    const timer = setTimeout(() => {
      if (socket.bytesRead === 0) socket.destroy()
    }, ms)
    timer.unref()
    socket.once("close", () => clearTimeout(timer))
  })
}

/**
 * A path routerPath leaves unchanged: "/", or segments of visible ASCII without `%` (nothing to
 * decode), `;` or `#` (nothing cut off), upper case (nothing to lower) or an empty segment (no
 * doubled or trailing slash).
 */
const ROUTER_NORMAL = /^(?:\/[\x21\x22\x24\x26-\x2e\x30-\x3a\x3c-\x40\x5b-\x7e]+)+$|^\/$/

/**
 * A path as the router reads it: the router matches case-insensitively, decodes percent-encoding
 * and ignores repeated and trailing slashes (`//V1/tasks/x/events/%73tream/` reaches the same
 * handler), so a share counted by path must read it the same way or be walked around.
 */
export const routerPath = (path: string): string =>
  // Nearly every path is already as the router reads it: no decode, copies or replaces for those.
  ROUTER_NORMAL.test(path) ? path : normalisedRouterPath(path)

/** routerPath without its shortcut: the whole reading, for any path. */
export const normalisedRouterPath = (path: string): string => {
  // An absolute-form target is its path, as the Node adapter reads it; the router takes any first
  // character as `/` (`*v1/…` is `/v1/…`) and cuts the path at `;` or `#`.
  let target = absoluteFormPath(path)
  // Its path only (the query, when an absolute-form target has one, is not the router's).
  if (target !== path) target = target.split("?", 1)[0]!
  if (target.charCodeAt(0) !== 47) target = "/" + target.slice(1)
  target = target.split(/[;#]/, 1)[0]!
  let decoded = target
  try {
    decoded = decodeURIComponent(target)
  } catch {
    // Malformed: the router answers it 400 anyway.
  }
  return decoded.toLowerCase().replace(/\/{2,}/g, "/").replace(/(.)\/+$/, "$1")
}

/** At most `perClient` answers in progress per client (by the response's life). */
const shareOf = (perClient: number) => {
  const open = new Map<string, number>()
  return {
    take: (client: string, res: http.ServerResponse): boolean => {
      const n = open.get(client) ?? 0
      if (n >= perClient) return false
      open.set(client, n + 1)
      res.on("close", () => {
        const left = open.get(client)! - 1
        if (left === 0) open.delete(client)
        else open.set(client, left)
      })
      return true
    }
  }
}

const tooManyHeaders = (max: number) =>
  errorJson(431, "Request Header Fields Too Large", `Too many request headers: at most ${max} are accepted`)

/** On a response the application's request log follows: the request's id (src/observability/requests.ts). */
export const REQUEST_ID_OF: unique symbol = Symbol("gateway/requestIdOf")

/**
 * Each connection's last response (and through it its request), for the parser's errors: a
 * property of the socket, not a WeakMap entry per request (the collector walks weak tables on
 * every collection; see ./arrival.ts).
 */
const LAST_RESPONSE = Symbol("lastResponse")
type WithLastResponse = { [LAST_RESPONSE]?: http.ServerResponse }

/** Once the answer is flushed, or after a second at most: a client that never closes its side cannot hold the connection. */
const closeWhenFlushed = (socket: Duplex) => {
  socket.once("finish", () => socket.destroy())
  setTimeout(() => socket.destroy(), 1_000).unref()
}

/** An answer written on the socket itself (no response object holds it), then the connection closed. */
const answerAndClose = (socket: Duplex, status: number, error: string, body: string, requestId: string | undefined) => {
  socket.write(
    `HTTP/1.1 ${status} ${error}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
      (requestId !== undefined ? `x-request-id: ${requestId}\r\n` : "") +
      `connection: close\r\n\r\n${body}`
  )
  socket.end()
  closeWhenFlushed(socket)
}

/** A request target with a byte a URL cannot hold raw (Node's HPE_INVALID_URL). */
const MALFORMED_TARGET =
  "Malformed HTTP request: the path or query holds a character a URL cannot carry raw (a control " +
  "character or a byte outside ASCII, such as UTF-8 text): percent-encode it (RFC 3986: each UTF-8 byte as %XX)"

/**
 * What Node answers itself, before any request handler runs (a timeout, a request it cannot
 * parse, headers over its size limit), in the spec's error shape instead of Node's empty bodies.
 * Like Node's own handler: once per connection, never in the middle of another answer, then closed.
 * `malformed` (the request log) names it: the id goes on the answer, the line and metrics follow.
 */
const clientErrorHandler = (malformed: MalformedAnswer | undefined) => {
  // Node's parser repeats its error on every later packet of the connection: one answer only.
  const answered = new WeakSet<Duplex>()
  return (err: NodeJS.ErrnoException, socket: Duplex) => {
    const inFlight = (socket as { _httpMessage?: http.ServerResponse | null })._httpMessage
    const earlier = inFlight != null || (socket as Socket).bytesWritten > 0
    if (
      err.code === "ECONNRESET" || !socket.writable || answered.has(socket) ||
      // The client ended its side mid-message after an earlier request: the message was that
      // request's body (a refused one, being discarded) or a fragment, not a request to answer.
      (earlier && err.code === "HPE_INVALID_EOF_STATE")
    ) {
      socket.destroy()
      return
    }
    // The error is in the body of the connection's last request (a bad chunk, the request timeout):
    // one answered already (a 413 whose body is being thrown away) keeps its answer; one not yet
    // answered gets this one, now (its handler would wait for the rest of the body for ever).
    const last = (socket as WithLastResponse)[LAST_RESPONSE]
    const own = last !== undefined && last.req?.complete === false ? last : undefined
    if (own?.headersSent === true) {
      socket.destroy()
      return
    }
    answered.add(socket)
    const answer = () => {
      if (!socket.writable) return socket.destroy()
      const [status, error, message] = err.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? [408, "Request Timeout", "The request was not received in time"] as const
        : err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "Request Header Fields Too Large", "Request headers exceed the size limit"] as const
        : err.code === "HPE_INVALID_URL"
        // A raw é or control character in the path or query: the client can send it encoded.
        ? [400, "Bad Request", MALFORMED_TARGET] as const
        : [400, "Bad Request", "Malformed HTTP request"] as const
      const body = errorJson(status, error, message)
      const bytes = Buffer.byteLength(body)
      const ownId = (own as { [REQUEST_ID_OF]?: string } | undefined)?.[REQUEST_ID_OF]
      if (own !== undefined && ownId !== undefined) {
        // Answered through its response: the application's request log writes its one line (a
        // second line here left one request logged twice, this answer and a 499).
        own.setHeader("x-request-id", ownId)
        own.writeHead(status, { "content-type": "application/json", "content-length": bytes, connection: "close" })
        own.end(body)
        closeWhenFlushed(socket)
        return
      }
      // After an earlier request on the connection, what the parser had read may begin with that
      // request (pipelined in one packet): its method and path are not this one's.
      const read = own !== undefined
        ? Buffer.from(`${own.req.method} ${own.req.url} HTTP/1.1\r\n`, "latin1")
        : earlier
        ? undefined
        : (err as { rawPacket?: unknown }).rawPacket
      answerAndClose(socket, status, error, body, malformed?.(status, read, bytes))
    }
    // As Node does: a response already begun on the connection cannot be followed by another
    // until it ends (a request pipelined behind one answered at once); one that ended before (a
    // kept-alive connection's next request) can. Closing without a word left such a request with
    // no answer, no line and no count.
    if (inFlight == null || own !== undefined) return answer()
    inFlight.once("finish", answer)
    inFlight.once("close", () => {
      if (!inFlight.writableFinished) socket.destroy()
    })
  }
}

/**
 * Logs and counts an answer to a request Node's parser refused, given what the parser had read
 * (`rawPacket`, when Node gives it) and the answer body's length; returns the answer's request id.
 */
export type MalformedAnswer = (status: number, rawPacket: unknown, bytes: number) => string

type Collect = () => void

/**
 * One collection once the server has been idle for `idleMs` after requests, when the process
 * runs with `--expose-gc` (npm start): the memory-reducing one (../../lib/reducingCollection.ts),
 * which gives a burst's pages back (a cell's private memory 15 s after a burst: 113-186 MB with a
 * plain full collection, 82-107 MB with this one, 33 MB before the burst). npm start turns off
 * V8's memory reducer, whose repeated idle-time collections shrink the heap's growth limit so far
 * that the next burst of uploads ran a mark-compact every second request for seconds (0.50 vs
 * 0.09 per upload, 28 vs 15 ms of CPU each: bench/PROFILE.md); after this single one, the next
 * burst's uploads cost what they did after the plain one (8.6-9.3 against 8.4-10.2 ms of CPU).
 * Returns what to call on every request.
 */
export const collectWhenIdle = (
  server: http.Server,
  collect: Collect | undefined = reducingCollection(),
  idleMs = DEFAULT_SERVER_LIMITS.idleCollectMs
): (() => void) => {
  if (collect === undefined) return () => {}
  const clock = idleClock(collect, idleMs)
  clock.attach(server)
  return clock.note
}

/** An idle clock: `note` every request of the servers attached; one `collect` per idle period. */
const idleClock = (collect: Collect, idleMs: number) => {
  let lastRequestAt = 0
  let collected = true
  let servers = 0
  let timer: ReturnType<typeof setInterval> | undefined
  return {
    idleMs,
    /** Counts `server`'s requests on this clock until it closes (the timer runs while any is open). */
    attach: (server: http.Server) => {
      if (servers++ === 0) {
        timer = setInterval(() => {
          if (collected || Date.now() - lastRequestAt < idleMs) return
          collected = true
          collect()
        }, Math.max(10, Math.floor(idleMs / 4)))
        timer.unref()
      }
      server.once("close", () => {
        if (--servers === 0) clearInterval(timer)
      })
    },
    note: () => {
      lastRequestAt = Date.now()
      collected = false
    }
  }
}

let processClock: ReturnType<typeof idleClock> | undefined

/**
 * collectWhenIdle on the process's one clock: the gateway's port and the admin listener are one
 * heap, so either one's requests keep both from counting as idle, and a burst on both is followed
 * by one collection, not one per server (each had its own clock: the gateway's collection ran
 * while the admin listener was busy).
 */
export const collectWhenProcessIdle = (server: http.Server, idleMs: number): (() => void) => {
  const collect = reducingCollection()
  if (collect === undefined) return () => {}
  if (processClock === undefined || processClock.idleMs !== idleMs) processClock = idleClock(collect, idleMs)
  processClock.attach(server)
  return processClock.note
}

/**
 * How often Node checks the header and request timeouts (it does not time each request: a
 * connection past its timeout is cut at the next check). Node's default is 30 s, which would
 * let a 10 s header timeout run to 40 s; a quarter of the shorter timeout, within 50 ms..1 s.
 */
export const checkingIntervalMs = (limits: ServerLimits): number =>
  Math.min(1000, Math.max(50, Math.floor(Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs) / 4)))

const unavailable = (message: string) => errorJson(503, "Service Unavailable", message)

/**
 * The gateway's Node server. `limits` defaults to DEFAULT_SERVER_LIMITS field by field; main.ts
 * passes the settings read with `serverLimitsConfig`, and the process's `drain`.
 *
 * - A declared Content-Length over the limit: 413 at once, then the rest of the body is read
 *   and discarded (memory stays flat) so the client can read the answer; past a bounded amount
 *   the connection is dropped instead.
 * - A chunked body: counted as it arrives, 413 once it passes the limit, then discarded the
 *   same way.
 * - Bytes of bodies held at once (SVC_MAX_BODY_BYTES_IN_FLIGHT, BodyBudget.ts): a declared body
 *   is reserved before the application sees it, waiting briefly for room (SVC_BODY_BUDGET_WAIT_MS),
 *   else 503 with Retry-After; a chunked body takes its bytes as they arrive (503 when a chunk
 *   does not fit). Held until the response closes. Refused bodies are discarded as above. A
 *   small body (up to 64 KiB) never waits, so ordinary API calls pass whatever uploads hold.
 *   One client (clientAddress.ts) holds at most its share (SVC_MAX_BODY_BYTES_PER_CLIENT), and a
 *   large body arriving below SVC_MIN_BODY_BYTES_PER_SECOND is cut with 408.
 *
 * Floods (each 503 with `Retry-After: 1`): past SVC_MAX_CONNECTIONS, PROBE_RESERVE connections
 * serve only the probe paths (liveness and readiness stay answerable while the cap is full); a
 * connection silent for SVC_FIRST_BYTE_TIMEOUT_MS is closed; one client holds at most its share
 * of the event streams (SVC_EVENT_STREAMS_PER_CLIENT).
 *
 * It also holds the server limits (ServerLimits.ts) instead of Node's defaults: time to send the
 * headers and the whole request (408 and close past them), idle keep-alive time, the number of
 * headers (431 past it) and of open connections, in all and per client address (a connection
 * past either cap is closed at once).
 * A request without Host (HTTP/1.1) or with two is a 400, an Expect other than 100-continue a
 * 417 (hostAndExpect.ts): Node's own answers to those had empty bodies.
 * A request target with malformed percent-encoding (path or query) is a 400 here: the router
 * cannot decode such a path, and a query would be decoded leniently (bytes silently replaced).
 * What Node refuses itself (timeouts, unparsable requests, oversized headers) answers in the
 * spec's error shape too.
 *
 * Start and stop: a request that arrives after the port opened but before the application is
 * served answers 503 "Starting up" (only then). Given a Drain (Drain.ts), the server's
 * connections and requests are registered with it, so a SIGTERM drains them: every request
 * received is answered, the last answer on each connection with `Connection: close`.
 */
export const createGatewayServer = (
  maxBodyBytes: number,
  limits: Partial<ServerLimits> = {},
  drain?: Drain,
  /**
   * Called before each answer this server gives itself, before the application sees the request
   * (the request log's `observeOwnAnswers`: its id on the answer, its line and metrics).
   */
  ownAnswer?: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  /** The same for a request Node's parser refused (malformed, headers too large, too slow). */
  malformed?: MalformedAnswer
): http.Server => {
  const settings: ServerLimits = { ...DEFAULT_SERVER_LIMITS, ...limits }
  const server = http.createServer({
    ServerResponse: GatewayResponse,
    headersTimeout: settings.headersTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    connectionsCheckingInterval: checkingIntervalMs(settings),
    // Host is checked below (hostAndExpect.ts), where the answer takes the spec's error shape.
    requireHostHeader: false
  })
  server.keepAliveTimeout = settings.keepAliveTimeoutMs
  // Node drops headers past its maxHeadersCount silently (Host among them, when it comes last:
  // then a 400 for a missing Host). So Node keeps them all, bounded by its header size limit
  // (16 KiB: 431 above it), and the count is checked below: too many answer 431.
  server.maxHeadersCount = 0
  // Past the cap, PROBE_RESERVE connections more for the probes (below); without probe paths, none.
  const reserve = settings.probePaths.length > 0 ? PROBE_RESERVE : 0
  // One more than the reserve: the connection that finds it full is let in to evict a silent one.
  server.maxConnections = settings.maxConnections + reserve + (reserve > 0 ? 1 : 0)
  limitPerClient(server, settings.maxConnectionsPerClient)
  server.on("connection", noteAccepted)
  // Connections on which a request's headers have arrived.
  const requested = new WeakSet<Socket>()
  const reserved = reserveForProbes(
    server,
    settings.maxConnections,
    reserve,
    Math.min(settings.firstByteTimeoutMs, PROBE_REQUEST_WITHIN_MS),
    requested
  )
  closeSilent(server, settings.firstByteTimeoutMs)
  const streams = settings.streams === undefined ? undefined : shareOf(settings.streams.perClient)
  const budget = new BodyBudget(settings.maxBodyBytesInFlight, settings.maxBodyBytesPerClient)
  server.on("clientError", clientErrorHandler(malformed))
  // CONNECT (a proxy's tunnel): Node closes the socket without a word when nothing listens.
  server.on("connect", (req: http.IncomingMessage, socket: Duplex) => {
    const body = errorJson(405, "Method Not Allowed", "CONNECT is not served: this is not a proxy")
    const line = Buffer.from(`CONNECT ${req.url ?? ""} HTTP/1.1\r\n`, "latin1")
    answerAndClose(socket, 405, "Method Not Allowed", body, malformed?.(405, line, Buffer.byteLength(body)))
  })
  // Node emits `checkExpectation` (an Expect other than 100-continue) only to a listener, else
  // answers 417 with an empty body itself; the emit below answers it, so this one never runs.
  server.on("checkExpectation", () => {})
  // Past what the keep-alive and header timeouts allow together, and a check of Node's after them.
  drain?.track(server, settings.keepAliveTimeoutMs + settings.headersTimeoutMs + checkingIntervalMs(settings))
  const noteRequest = collectWhenProcessIdle(server, settings.idleCollectMs)
  // Whether the application was ever attached: before, a request is early ("starting up");
  // after (its handler detached at shutdown), late.
  let served = false
  server.on("newListener", (event: string | symbol) => {
    if (event === "request") served = true
    // No protocol upgrade is served here (no WebSockets, no h2c), and while an `upgrade`
    // listener exists (Effect's server adds one) Node hands every request carrying
    // `Connection: Upgrade` to it instead of emitting `request`: past every check below, the
    // drain's count and the connection rules (`curl --http2` had its event stream cut, 150
    // headers answered 200, the per-client stream share not counted). Without one, Node answers
    // it as the HTTP/1.1 request it also is, as RFC 9110 lets a server ignore Upgrade. Removed
    // on the next tick: `newListener` runs before the listener is added, and no socket is read
    // in between.
    if (event === "upgrade") process.nextTick(() => server.removeAllListeners("upgrade"))
  })
  const emit = server.emit.bind(server) as (event: string, ...args: Array<any>) => boolean
  server.emit = ((event: string, ...args: Array<any>) => {
    // Effect 4's server also takes `checkContinue` (Expect: 100-continue): the same checks apply.
    // `checkExpectation` (any other Expect) is answered 417 once the checks before it pass.
    if (event === "request" || event === "checkContinue" || event === "checkExpectation") {
      const [req, res] = args as [http.IncomingMessage, http.ServerResponse]
      const target = req.url ?? "/"
      const query = target.indexOf("?")
      const path = query === -1 ? target : target.slice(0, query)
      // Read as the router reads it: `/v1/health/`, `//v1/Health` or an absolute-form target are
      // the same probe, answered the same.
      const routed = routerPath(path)
      const probe = settings.probePaths.includes(routed)
      // A liveness probe every few seconds does not keep the cell from going idle (its memory
      // would never be given back); its answers allocate next to nothing.
      if (!probe) noteRequest()
      // Effect 4 sends `100 Continue` only when its own body reader starts, and our body readers
      // (jsonInput.ts, the uploads) read Node's request directly: the client would wait for it.
      // So a request that passes the checks below is told to go on here, and the application
      // sees an ordinary request (as Node's default did; a refused one gets its answer instead).
      const proceed = () => {
        if (event !== "checkContinue") return emit(event, ...args)
        res.writeContinue()
        return emit("request", req, res)
      }
      stampArrival(req)
      requested.add(req.socket)
      ;(req.socket as WithLastResponse)[LAST_RESPONSE] = res
      // (Effect 4's response writer settles on 'close' itself: no wrapper of res.end is needed.)
      drain?.admit(res)
      const answerEarly = ({ status, body }: EarlyAnswer): boolean => {
        ownAnswer?.(req, res)
        res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        res.end(body)
        return true
      }
      const handle = (): boolean => {
        if (req.rawHeaders.length / 2 > settings.maxHeaders) {
          ownAnswer?.(req, res)
          const body = tooManyHeaders(settings.maxHeaders)
          res.writeHead(431, { "content-type": "application/json", "content-length": Buffer.byteLength(body), connection: "close" })
          res.end(body)
          return true
        }
        const hostless = hostRefusal(req)
        if (hostless !== undefined) return answerEarly(hostless)
        // Node takes any Expect holding the word 100-continue for one (`100-continue, foo`, two
        // Expect headers, `100-continue-x`): only the exact expectation is.
        if (event === "checkExpectation" || (event === "checkContinue" && !isContinueOnly(req))) {
          return answerEarly(expectationFailed(req))
        }
        if (reserved.has(req.socket)) {
          // A connection past the cap: the probes are answered, anything else is told to come back.
          res.shouldKeepAlive = false
          if (!probe) {
            ownAnswer?.(req, res)
            const body = unavailable(`At the connection cap (SVC_MAX_CONNECTIONS=${settings.maxConnections}); retry after ${RETRY_AFTER_SECONDS} s`)
            res.writeHead(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "retry-after": RETRY_AFTER_SECONDS })
            res.end(body)
            return true
          }
        }
        if (streams !== undefined && settings.streams!.path.test(routed)) {
          const client = requestClient(req, settings.clientAddress)
          if (!streams.take(client, res)) {
            ownAnswer?.(req, res)
            const body = unavailable(
              `Too many event streams open from one client (SVC_EVENT_STREAMS_PER_CLIENT=${settings.streams!.perClient}); ` +
                `retry after ${RETRY_AFTER_SECONDS} s`
            )
            res.writeHead(503, { "content-type": "application/json", "content-length": Buffer.byteLength(body), "retry-after": RETRY_AFTER_SECONDS })
            res.end(body)
            return true
          }
        }
        // Without a `%` there is no escape to be malformed.
        const malformed = target.includes("%") ? malformedPercentEncoding(target) : undefined
        if (malformed !== undefined) {
          ownAnswer?.(req, res)
          const where = query !== -1 && target.indexOf(malformed.replace(/…$/, "")) > query ? "query string" : "path"
          const body = errorJson(
            400,
            "Bad Request",
            `Malformed request ${where}: invalid percent-encoding ${JSON.stringify(malformed)} (expected %XX escapes of UTF-8 bytes)`
          )
          res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
          res.end(body)
          return true
        }
        // Listening but not serving: answer rather than leave the request hanging. Before the
        // application is attached that is start-up; after, shutdown (a drain closes connections
        // before the application is detached, so this is for servers run without one).
        if (server.listenerCount("request") === 0) {
          ownAnswer?.(req, res)
          if (served) {
            res.writeHead(503, { "content-type": "application/json", connection: "close", "retry-after": RETRY_AFTER_SECONDS })
            res.end(unavailable("Shutting down"))
          } else {
            res.writeHead(503, { "content-type": "application/json", "retry-after": "1" })
            res.end(unavailable("Starting up; retry shortly"))
          }
          return true
        }
        const declared = req.headers["content-length"]
        const length = declared === undefined ? 0 : Number(declared)
        const streamed = settings.streamedBodies !== undefined && req.method === "POST" &&
          settings.streamedBodies.test(routed)
        if (length > maxBodyBytes) {
          ownAnswer?.(req, res)
          refuseDeclaredBody(req, res, tooLarge(maxBodyBytes, streamed), maxBodyBytes)
          return true
        }
        if (length > 0 && streamed) {
          // Written to disk as it arrives: no budget to hold, but a trickle is still cut.
          if (length > SMALL_BODY_BYTES) watchBodyPace(req, res, settings.minBodyBytesPerSecond)
          return proceed()
        }
        if (length > 0) {
          admitDeclaredBody(req, res, length, budget, settings, maxBodyBytes, proceed, ownAnswer)
          return true
        }
        if (declared === undefined && req.headers["transfer-encoding"] !== undefined) {
          const counted = capChunkedBody(
            req,
            res,
            maxBodyBytes,
            streamed ? undefined : budget,
            requestClient(req, settings.clientAddress),
            settings.minBodyBytesPerSecond,
            drain,
            ownAnswer
          )
          if (!counted) return true
        }
        return proceed()
      }
      // During a drain the answer that closes a connection is the last request read on it
      // (Drain.closeAfter, decided as its headers go out). Node hands over the requests pipelined
      // in one read one at a time as it parses them, and one answered at once (health, a refusal
      // below) would close the connection before the next was seen: those behind it, read and
      // never answered. So in a drain each request is handled from the next turn on, once every
      // request of the read has been admitted.
      if (drain?.draining === true) {
        setImmediate(() => {
          // The client left meanwhile: its line, as a 499, as for a body that waited for room.
          if (res.closed) ownAnswer?.(req, res)
          else handle()
        })
        return true
      }
      return handle()
    }
    return emit(event, ...args)
  }) as typeof server.emit
  return server
}
