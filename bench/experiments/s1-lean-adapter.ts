/**
 * Effect's `HttpServer` on a Node HTTP/1.1 server (nodeServer.ts's), in place of
 * @effect/platform-node's `NodeHttpServer.make`: the same service and the same request API
 * (`NodeHttpServerRequest.toIncomingMessage` / `toServerResponse` read `source` / `response`),
 * borrowing its response writer, with less done per request for what the gateway never uses.
 *
 * - HTTP/1.1 only, no upgrades and no WebSockets: an `Upgrade` request is an ordinary request
 *   (Node's default without an `upgrade` listener), so it passes nodeServer.ts's checks like any other.
 * - A request's fiber is registered for interruption at shutdown only when it outlives the
 *   call that started it (most answers are written synchronously), in a Set, not a scope.
 * - The unread-body teardown (drain up to 256 KiB after the answer, else close) is attached
 *   only to a request that declares a body.
 * - `Expect: 100-continue` is answered by nodeServer.ts before the application sees the request.
 *
 * Client abort (the response closed before it ended) interrupts the request's fiber; a response
 * that fails after its headers were sent is cut, never ended as if complete.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Cookies from "effect/http/Cookies"
import * as Headers from "effect/http/Headers"
import * as HttpEffect from "effect/http/HttpEffect"
import type * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServer from "effect/http/HttpServer"
import {
  causeResponse,
  ClientAbort,
  HttpServerError,
  RequestParseError,
  ResponseError,
  ServeError
} from "effect/http/HttpServerError"
import * as Request from "effect/http/HttpServerRequest"
import * as Response from "effect/http/HttpServerResponse"
import * as UrlParams from "effect/http/UrlParams"
import * as Latch from "effect/Latch"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { NodeHttpIncomingMessage } from "@effect/platform-node/NodeHttpIncomingMessage"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeMultipart from "@effect/platform-node/NodeMultipart"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type * as http from "node:http"
import type { ListenOptions } from "node:net"
import { Readable, Transform } from "node:stream"
import { pipeline } from "node:stream/promises"

export interface ServeOptions extends ListenOptions {
  /** How long closing the server may wait for open requests at scope close (20 s, as upstream). */
  readonly gracefulShutdownTimeout?: Duration.Input | undefined
}

/** Body bytes pulled through `stream`, by Node request (a modified request shares its source). */
const bodyBytesRead = new WeakMap<http.IncomingMessage, number>()

const notUpgradeable = (request: ServerRequest) =>
  new HttpServerError({ reason: new RequestParseError({ request, description: "not an upgradeable ServerRequest" }) })

class ServerRequest extends NodeHttpIncomingMessage<HttpServerError> implements Request.HttpServerRequest {
  readonly [Request.TypeId]: typeof Request.TypeId = Request.TypeId
  // The adapter tears an unread body down after the answer instead.
  override destroyOnOverflow = false
  override closeOnDone = false
  declare readonly source: http.IncomingMessage
  readonly response: http.ServerResponse
  readonly url: string
  private headersOverride: Headers.Headers | undefined
  private readonly peerAddressOverride: Option.Option<string> | undefined
  readonly protocol: "http" | "https" | undefined

  constructor(
    source: http.IncomingMessage,
    response: http.ServerResponse,
    url?: string,
    headersOverride?: Headers.Headers,
    remoteAddressOverride?: Option.Option<string>,
    peerAddressOverride?: Option.Option<string>,
    protocol?: "http" | "https"
  ) {
    super(source, (cause) =>
      new HttpServerError({
        reason: new RequestParseError({
          request: this,
          reason: cause instanceof NodeStream.MaxBytesError ? "BodyTooLarge" : "Parse",
          cause
        })
      }), remoteAddressOverride)
    this.response = response
    if (url === undefined) {
      url = source.url!
      // An absolute-form target (RFC 9112 §3.2.2): its authority takes precedence over Host.
      if (url.charCodeAt(0) !== 47 /* / */ && /^https?:\/\//i.test(url)) {
        try {
          const target = new URL(url)
          url = target.pathname + target.search
          headersOverride = Headers.fromInput({ ...source.headers, host: target.host })
        } catch {
          // Not a URL: the router answers it.
        }
      }
    }
    this.url = url
    this.headersOverride = headersOverride
    this.peerAddressOverride = peerAddressOverride
    this.protocol = protocol
  }

  override get headers(): Headers.Headers {
    return (this.headersOverride ??= Headers.fromInput(this.source.headers))
  }

  private cachedMethod: string | undefined
  get method(): string {
    return (this.cachedMethod ??= this.source.method!.toUpperCase())
  }

  get peerAddress(): Option.Option<string> {
    return this.peerAddressOverride ?? this.remoteAddress
  }

  private cachedCookies: Record<string, string> | undefined
  get cookies(): Record<string, string> {
    return (this.cachedCookies ??= Cookies.parseHeader(this.headers.cookie ?? ""))
  }

  get originalUrl(): string {
    const url = this.source.url!
    const host = this.source.headers.host
    if (url[0] !== "/" || host === undefined) return url
    return `${(this.source.socket as { encrypted?: boolean } | null)?.encrypted ? "https" : "http"}://${host}${url}`
  }

  override get stream() {
    const source = this.source
    return Stream.mapArray(super.stream, (chunk) => {
      let bytes = bodyBytesRead.get(source) ?? 0
      for (const item of chunk) bytes += item.length
      bodyBytesRead.set(source, bytes)
      return chunk
    })
  }

  private multipartEffect: Request.HttpServerRequest["multipart"] | undefined
  get multipart(): Request.HttpServerRequest["multipart"] {
    return (this.multipartEffect ??= Effect.runSync(
      Effect.cached(Effect.suspend(() => NodeMultipart.persisted(this.source, this.source.headers)))
    ))
  }

  get multipartStream(): Request.HttpServerRequest["multipartStream"] {
    return Stream.suspend(() => NodeMultipart.stream(this.source, this.source.headers))
  }

  get upgrade(): Request.HttpServerRequest["upgrade"] {
    return Effect.fail(notUpgradeable(this))
  }

  upgradeWith(): Request.HttpServerRequest["upgrade"] {
    return Effect.fail(notUpgradeable(this))
  }

  modify(options: Parameters<Request.HttpServerRequest["modify"]>[0]): Request.HttpServerRequest {
    return new ServerRequest(
      this.source,
      this.response,
      options.url ?? this.url,
      options.headers ?? this.headersOverride,
      "remoteAddress" in options ? options.remoteAddress : this.remoteAddressOverride,
      options.peerAddress ?? this.peerAddressOverride,
      options.protocol ?? this.protocol
    )
  }

  override toString(): string {
    return `ServerRequest(${this.method} ${UrlParams.redactUrl(this.url)})`
  }

  override toJSON(): unknown {
    return { _id: "HttpServerRequest", method: this.method, url: UrlParams.redactUrl(this.originalUrl) }
  }
}

/**
 * The `request` listener for `app`: each request runs in a fiber of its own with the request in
 * its context; `inFlight` holds those still running after the listener returns.
 */
const makeHandler = (
  app: Effect.Effect<Response.HttpServerResponse, unknown, Request.HttpServerRequest | Scope.Scope>,
  middleware: HttpMiddleware.HttpMiddleware | undefined,
  inFlight: Set<Fiber.Fiber<unknown, unknown>>
) => {
  const handled = HttpEffect.toHandled(app, handleResponse, middleware)
  return Effect.withFiber((parent) => {
    const services = parent.context
    return Effect.succeed(function handler(nodeRequest: http.IncomingMessage, nodeResponse: http.ServerResponse) {
      // Prepended so it runs before Node's own `finish` listener drains or destroys. A request
      // that declares no body has none to tear down.
      if (nodeRequest.headers["content-length"] !== undefined || nodeRequest.headers["transfer-encoding"] !== undefined) {
        nodeResponse.prependListener("finish", () => teardownBody(nodeRequest, nodeResponse))
      }
      const fiber = Effect.runForkWith(
        Context.add(services, Request.HttpServerRequest, new ServerRequest(nodeRequest, nodeResponse))
      )(handled)
      if (fiber.pollUnsafe() !== undefined) return
      inFlight.add(fiber)
      fiber.addObserver(() => inFlight.delete(fiber))
      nodeResponse.on("close", () => {
        if (!nodeResponse.writableEnded) fiber.interruptUnsafe(parent.id, ClientAbort.annotation)
      })
    })
  })
}

/**
 * A scoped `HttpServer` on the server `evaluate` makes: listens with `options`, attaches the
 * application on `serve`, and at scope close detaches it, interrupts the requests still running
 * and closes the server (waiting up to `gracefulShutdownTimeout` for its connections).
 */
export const make = Effect.fnUntraced(function*(evaluate: () => http.Server, options: ServeOptions) {
  const scope = yield* Effect.scope
  const server = evaluate()
  const shutdown = yield* Effect.callback<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    server.close((error) => resume(error ? Effect.die(error) : Effect.void))
  }).pipe(Effect.cached)
  const preemptiveShutdown = Effect.timeoutOrElse(shutdown, {
    duration: options.gracefulShutdownTimeout ?? Duration.seconds(20),
    orElse: () => Effect.void
  })
  yield* Scope.addFinalizer(scope, shutdown)
  yield* Effect.callback<void, ServeError>((resume) => {
    const onError = (cause: Error) => resume(Effect.fail(new ServeError({ cause })))
    server.on("error", onError)
    server.listen(options, () => {
      server.off("error", onError)
      resume(Effect.void)
    })
  })
  const address = server.address()!
  const boundAddress = typeof address === "string"
    ? NetAddress.unixPathAddress(address)
    : yield* Effect.fromResult(NetAddress.inetAddressFromIpString(address.address, address.port)).pipe(
      Effect.mapError((cause) => new ServeError({ cause }))
    )
  return HttpServer.make({
    address: boundAddress,
    serve: Effect.fnUntraced(function*(app, middleware) {
      const serveScope = yield* Effect.scope
      const inFlight = new Set<Fiber.Fiber<unknown, unknown>>()
      const handler = yield* makeHandler(app, middleware, inFlight)
      yield* Scope.addFinalizerExit(serveScope, () =>
        Effect.ensuring(
          Effect.andThen(Fiber.interruptAll(inFlight), preemptiveShutdown),
          Effect.sync(() => {
            server.off("request", handler)
            server.off("checkContinue", handler)
          })
        ))
      server.on("request", handler)
      // Listened for, so that Node leaves `100 Continue` to nodeServer.ts (which answers it
      // after its checks and emits `request`) instead of sending it before them.
      server.on("checkContinue", handler)
    })
  })
})

/** `HttpServer` on the server `evaluate` makes, with the platform's HTTP services (as NodeHttpServer.layer). */
export const layer = (evaluate: () => http.Server, options: ServeOptions) =>
  Layer.mergeAll(Layer.effect(HttpServer.HttpServer)(make(evaluate, options)), NodeHttpServer.layerHttpServices)

// ---------------------------------------------------------------------------------------------
// Writing the answer: @effect/platform-node's `handleResponse`, HTTP/1.1 only.

const handleResponse = (request: Request.HttpServerRequest, response: Response.HttpServerResponse): Effect.Effect<unknown, unknown> => {
  const nodeResponse = (request as ServerRequest).response
  if (nodeResponse.writableEnded) return Effect.void
  let headers: Record<string, string | ReadonlyArray<string>> = response.headers
  if (response.status === 204 || response.status === 205) {
    const { "content-length": _, ...rest } = headers
    headers = rest
  }
  if (!Cookies.isEmpty(response.cookies)) {
    headers = { ...headers }
    const toSet = Cookies.toSetCookieHeaders(response.cookies)
    if (headers["set-cookie"] !== undefined) toSet.push(headers["set-cookie"] as string)
    headers["set-cookie"] = toSet
  }
  try {
    return writeResponse(request as ServerRequest, response, nodeResponse, headers)
  } catch (defect) {
    // writeHead throws synchronously on headers Node rejects and on statuses outside 200-599.
    return Effect.andThen(cancelResponseBody(response.body), handleCause(nodeResponse, response)(Cause.die(defect)))
  }
}

type OutHeaders = Record<string, string | ReadonlyArray<string>>

const writeResponse = (
  request: ServerRequest,
  response: Response.HttpServerResponse,
  nodeResponse: http.ServerResponse,
  headers: OutHeaders
): Effect.Effect<unknown, unknown> => {
  // Nothing reaches a disconnected client, and writing would throw or never finish.
  if (nodeResponse.destroyed) return cancelResponseBody(response.body)
  if (request.method === "HEAD") {
    writeHead(nodeResponse, response, headers)
    return Effect.andThen(cancelResponseBody(response.body), endAndAwait(nodeResponse))
  }
  if (Response.omitsBody(response)) {
    writeHead(nodeResponse, response, headers)
    nodeResponse.end()
    return cancelResponseBody(response.body)
  }
  nodeResponse.strictContentLength = true
  const body = response.body
  switch (body._tag) {
    case "Empty": {
      writeHead(nodeResponse, response, headers)
      return end(nodeResponse, response)
    }
    case "Raw": {
      const raw = body.body as { pipe?: unknown } | null
      const piped = typeof raw === "object" && raw !== null && typeof raw.pipe === "function"
      writeHead(nodeResponse, response, headers, piped)
      if (piped) {
        return Effect.tryPromise({
          try: (signal) => pipeTo(raw as unknown as Readable, nodeResponse, headers, signal),
          catch: (cause) =>
            new HttpServerError({ reason: new ResponseError({ request, response, description: "Error writing raw response", cause }) })
        }).pipe(Effect.interruptible, Effect.tapCause(handleCause(nodeResponse, response)))
      }
      return endAndAwait(nodeResponse, body.body as string | Uint8Array).pipe(Effect.tapCause(handleCause(nodeResponse, response)))
    }
    case "Uint8Array": {
      writeHead(nodeResponse, response, headers)
      // Under 1 MB no need to wait for the write; text lets Node send headers and body together.
      if (body.contentLength < 1024 * 1024) return end(nodeResponse, response, (body as { text?: string }).text ?? body.body)
      return endAndAwait(nodeResponse, (body as { text?: string }).text ?? body.body).pipe(
        Effect.tapCause(handleCause(nodeResponse, response))
      )
    }
    case "FormData": {
      const r = new globalThis.Response(body.formData)
      const formHeaders = { ...headers, ...Object.fromEntries(r.headers) }
      writeHead(nodeResponse, response, formHeaders)
      return Effect.tryPromise({
        try: (signal) => pipeTo(Readable.fromWeb(r.body as never), nodeResponse, formHeaders, signal),
        catch: (cause) =>
          new HttpServerError({ reason: new ResponseError({ request, response, description: "Error writing FormData response", cause }) })
      }).pipe(Effect.interruptible, Effect.tapCause(handleCause(nodeResponse, response)))
    }
    case "Stream": {
      writeHead(nodeResponse, response, headers, true)
      const drainLatch = Latch.makeUnsafe()
      nodeResponse.on("drain", () => drainLatch.openUnsafe())
      return body.stream.pipe(
        Stream.orDie,
        Stream.runForEachArray((array) => {
          const chunk = array.length > 1 ? Buffer.concat(array as unknown as Array<Uint8Array>) : array[0]!
          if (nodeResponse.write(chunk)) return Effect.void
          drainLatch.closeUnsafe()
          return drainLatch.await
        }),
        Effect.interruptible,
        Effect.matchCauseEffect({
          onSuccess: () => end(nodeResponse, response),
          onFailure: handleCause(nodeResponse, response)
        })
      )
    }
  }
}

// On HTTP/1.1 Node sends a 1xx as an interim response, so the client would never get a final one.
const isFinalStatus = (status: number) => status >= 200 && status <= 599
const internalServerError = Response.empty({ status: 500 })
const invalidStatusError = (status: number) => new RangeError(`Invalid final response status: ${status}`)

const writeHead = (nodeResponse: http.ServerResponse, response: Response.HttpServerResponse, headers: OutHeaders, streaming = false) => {
  if (!isFinalStatus(response.status)) throw invalidStatusError(response.status)
  nodeResponse.writeHead(
    response.status,
    response.statusText as string,
    (closesConnection(nodeResponse.req, streaming) ? { ...headers, connection: "close" } : headers) as http.OutgoingHttpHeaders
  )
}

// Unread request body discarded after the response to keep the connection alive; past this it closes.
const maxDrainBytes = 256 * 1024
// Time the client gets to read the response after the FIN, before a destroy can reset the connection.
const closeGracePeriod = 500

// Decided when the headers are written, while `Connection: close` can still be sent.
const closesConnection = (request: http.IncomingMessage | undefined, streaming: boolean) => {
  if (request === undefined || request.complete) return false
  const contentLength = request.headers["content-length"]
  return !streaming && contentLength !== undefined && Number(contentLength) - (bodyBytesRead.get(request) ?? 0) > maxDrainBytes
}

// Node drains an untouched body in full, leaves a partly read one unread, and destroys a closing
// socket as soon as the response is flushed, which resets the connection while body bytes are
// queued and can lose the response.
const teardownBody = (request: http.IncomingMessage, response: http.ServerResponse) => {
  if (request.complete || request.destroyed) return
  const socket = request.socket
  const internal = response as unknown as { _last: boolean }
  if (internal._last) {
    // Skips Node's `_dump`; unlike `_dumped`, keeps the parser applying backpressure.
    ;(request as unknown as { _consuming: boolean })._consuming = true
    internal._last = false
    return closeSocket(socket)
  }
  let bytes = 0
  request.on("data", (chunk: Buffer) => {
    bytes += chunk.length
    if (bytes > maxDrainBytes) {
      // Pausing stops further `data` events, so this runs once.
      request.pause()
      closeSocket(socket)
    }
  })
  request.resume()
}

const closeSocket = (socket: http.IncomingMessage["socket"]) => {
  if (socket.destroyed) return
  socket.end()
  const timer = setTimeout(() => socket.destroy(), closeGracePeriod)
  socket.once("close", () => clearTimeout(timer))
}

const cancelResponseBody = (body: Response.HttpServerResponse["body"]): Effect.Effect<void> => {
  const stream = body._tag === "Raw" ? body.body : undefined
  return stream instanceof Readable ? Effect.sync(() => void stream.destroy()) : Effect.void
}

// `end`'s callback runs only on `finish`, which a disconnect replaces with `close`; a response
// already destroyed emits neither.
const endAndAwait = (nodeResponse: http.ServerResponse, chunk?: string | Uint8Array) =>
  Effect.callback<void>((resume) => {
    if (nodeResponse.destroyed) return resume(Effect.void)
    let completed = false
    const done = () => {
      if (completed) return
      completed = true
      nodeResponse.off("close", done)
      resume(Effect.void)
    }
    nodeResponse.once("close", done)
    if (chunk === undefined) nodeResponse.end(done)
    else nodeResponse.end(chunk, done)
  })

const end = (nodeResponse: http.ServerResponse, response: Response.HttpServerResponse, chunk?: string | Uint8Array): Effect.Effect<unknown, unknown> => {
  try {
    nodeResponse.end(chunk)
    return Effect.void
  } catch (defect) {
    return handleCause(nodeResponse, response)(Cause.die(defect))
  }
}

// Lengths checked before writing: Node's strictContentLength throws uncaught inside pipeline.
const pipeTo = (readable: Readable, nodeResponse: http.ServerResponse, headers: OutHeaders, signal: AbortSignal) => {
  const contentLength = headers["content-length"]
  if (typeof contentLength !== "string") return pipeline(readable, nodeResponse, { signal })
  let remaining = Number(contentLength)
  const mismatch = () => new Error(`Response body doesn't match content-length of ${contentLength}`)
  return pipeline(
    readable,
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        remaining -= chunk.length
        callback(remaining < 0 ? mismatch() : null, chunk)
      },
      flush(callback) {
        callback(remaining > 0 ? mismatch() : null)
      }
    }),
    nodeResponse,
    { signal }
  )
}

const handleCause = (nodeResponse: http.ServerResponse, originalResponse: Response.HttpServerResponse) =>
(originalCause: Cause.Cause<unknown>): Effect.Effect<never, unknown> =>
  Effect.flatMap(causeResponse(originalCause), ([response, cause]) => {
    const headersSent = nodeResponse.headersSent
    let abort = headersSent
    if (!headersSent) {
      if (!isFinalStatus(response.status)) {
        cause = Cause.combine(cause, Cause.die(invalidStatusError(response.status)))
        response = internalServerError
      }
      try {
        writeHead(nodeResponse, response, {})
      } catch {
        abort = true
      }
    }
    if (!nodeResponse.writableEnded) {
      // Ending a started response normally would make a partial body look complete.
      if (abort) nodeResponse.destroy()
      else nodeResponse.end()
    }
    return Effect.failCause(headersSent ? Cause.combine(originalCause, Cause.die(originalResponse)) : cause)
  })
