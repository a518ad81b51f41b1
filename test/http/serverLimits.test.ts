/**
 * The Node server's own limits (src/http/server/ServerLimits.ts, src/http/server/nodeServer.ts), over real
 * sockets with short settings: slow headers and stalled bodies are cut, connections past the
 * cap are closed, too many headers answer 431, idle keep-alive connections are closed. And the
 * settings: defaults, and every invalid value refused naming the variable, value and range.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import type * as http from "node:http"
import * as net from "node:net"
import { checkingIntervalMs, createGatewayServer } from "../../src/http/server/nodeServer.js"
import { DEFAULT_SERVER_LIMITS, type ServerLimits, serverLimitsConfig } from "../../src/http/server/ServerLimits.js"
import { envProvider } from "../fixtures/config.js"
import { requestTo } from "./support.js"

const servers: Array<http.Server> = []
const sockets: Array<net.Socket> = []

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await Promise.all(servers.splice(0).map((server) =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  ))
})

/** The gateway's Node server with `limits`, answering 200 once it has read the whole body. */
const start = async (limits: Partial<ServerLimits>): Promise<number> => {
  const server = createGatewayServer(1024 * 1024, limits)
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ ok: true, headers: req.rawHeaders.length / 2 }))
    })
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return (server.address() as net.AddressInfo).port
}

interface Ending {
  /** Milliseconds from connect until the server closed the connection. */
  readonly afterMs: number
  /** What the server sent before closing. */
  readonly received: string
}

/** Opens a raw connection, runs `drive` on it, resolves when the server closes it. */
const connect = (port: number, drive: (socket: net.Socket) => void, timeoutMs = 5_000): Promise<Ending> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    sockets.push(socket)
    let received = ""
    let started = 0
    const timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs)
    socket.on("connect", () => {
      started = Date.now()
      drive(socket)
    })
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1")
    })
    socket.on("error", () => {})
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ afterMs: Date.now() - started, received })
    })
  })

/** A response Node's layer wrote (no handler ran): the status, and the spec's error body. */
const expectNodeError = (received: string, status: number, error: string) => {
  expect(received).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
  const body = JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4))
  expect(body).toEqual({ statusCode: status, error, message: expect.any(String) })
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("server limits over real sockets", () => {
  it("headers sent slowly: cut with 408 after the header timeout", async () => {
    const limits = { headersTimeoutMs: 400, requestTimeoutMs: 2_000 }
    const port = await start(limits)
    const ending = await connect(port, (socket) => {
      socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n")
      // One header line every 100 ms, never the blank line that ends them.
      let n = 0
      const drip = setInterval(() => {
        if (socket.destroyed) return clearInterval(drip)
        socket.write(`X-Slow-${n++}: 1\r\n`)
      }, 100)
      socket.on("close", () => clearInterval(drip))
    })
    expectNodeError(ending.received, 408, "Request Timeout")
    expect(ending.afterMs).toBeGreaterThanOrEqual(limits.headersTimeoutMs - 50)
    expect(ending.afterMs).toBeLessThan(limits.headersTimeoutMs + 2 * checkingIntervalMs({ ...DEFAULT_SERVER_LIMITS, ...limits }) + 500)
  })

  it("a body that stalls: cut with 408 after the request timeout", async () => {
    const limits = { headersTimeoutMs: 300, requestTimeoutMs: 800 }
    const port = await start(limits)
    const ending = await connect(port, (socket) => {
      socket.write("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"a\":")
    })
    expectNodeError(ending.received, 408, "Request Timeout")
    expect(ending.afterMs).toBeGreaterThanOrEqual(limits.requestTimeoutMs - 50)
    expect(ending.afterMs).toBeLessThan(limits.requestTimeoutMs + 2 * checkingIntervalMs({ ...DEFAULT_SERVER_LIMITS, ...limits }) + 500)
  })

  it("a request sent in time is answered (the limits do not cut normal traffic)", async () => {
    const port = await start({ headersTimeoutMs: 300, requestTimeoutMs: 800 })
    const res = await requestTo(port, "POST", "/v1/x", { headers: { "content-type": "application/json" }, body: "{\"a\":1}" })
    expect(res.status).toBe(200)
  })

  it("an idle keep-alive connection is closed after the keep-alive timeout", async () => {
    const port = await start({ keepAliveTimeoutMs: 300 })
    const ending = await connect(port, (socket) => {
      socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
    })
    expect(ending.received).toMatch(/^HTTP\/1\.1 200/)
    expect(ending.afterMs).toBeGreaterThanOrEqual(250)
    // Node closes an idle connection a little after keepAliveTimeout (its timer check adds up to ~1 s).
    expect(ending.afterMs).toBeLessThan(3_000)
  })

  it("more connections than maxConnections: the extra one is closed at once, unanswered", async () => {
    const port = await start({ maxConnections: 2 })
    // Two connections held open, each with a request in flight (its body never finishes).
    const held = [0, 1].map(() => {
      const socket = net.connect(port, "127.0.0.1")
      sockets.push(socket)
      socket.on("error", () => {})
      socket.write("POST /v1/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
      return socket
    })
    await Promise.all(held.map((s) => new Promise((resolve) => s.once("connect", resolve))))
    await tick(100)
    const extra = await connect(port, (socket) => socket.write("GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n"), 2_000)
    expect(extra.received).toBe("")
    expect(extra.afterMs).toBeLessThan(1_000)
    // Once one of them is gone, a new connection is served again.
    held[0]!.destroy()
    await tick(100)
    expect((await requestTo(port, "GET", "/v1/health")).status).toBe(200)
  })

  it("too many headers: 431 in the spec's shape; exactly maxHeaders is fine", async () => {
    const port = await start({ maxHeaders: 10 })
    // Node's request adds Host and Connection: 8 more make 10.
    const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`x-h${i}`, "1"]))
    const ok = await requestTo(port, "GET", "/v1/health", { headers: headers(8) })
    expect(ok.status).toBe(200)
    expect(ok.body.headers).toBe(10)
    const tooMany = await requestTo(port, "GET", "/v1/health", { headers: headers(9) })
    expect(tooMany.status).toBe(431)
    expect(tooMany.body).toEqual({
      statusCode: 431,
      error: "Request Header Fields Too Large",
      message: "Too many request headers: at most 10 are accepted"
    })
    // Far more than the limit, Host last (Node would drop headers past its own count, Host
    // included, and answer 400 for a missing Host).
    for (const n of [100, 500, 1500]) {
      expect((await requestTo(port, "GET", "/v1/health", { headers: headers(n) })).status, `${n} headers`).toBe(431)
    }
  })

  it("what Node refuses before any handler runs is in the spec's shape too", async () => {
    const port = await start({})
    const garbage = await connect(port, (socket) => socket.write("NOT HTTP AT ALL\r\n\r\n"))
    expectNodeError(garbage.received, 400, "Bad Request")
    const huge = await connect(port, (socket) =>
      socket.write(`GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`))
    expectNodeError(huge.received, 431, "Request Header Fields Too Large")
  })

  it("the defaults are in force when no limits are given", async () => {
    const server = createGatewayServer(1024)
    servers.push(server)
    expect(server.headersTimeout).toBe(10_000)
    expect(server.requestTimeout).toBe(60_000)
    expect(server.keepAliveTimeout).toBe(5_000)
    expect(server.maxConnections).toBe(1024)
    // Node keeps every header (bounded by its 16 KiB header size) so the count can be checked.
    expect(server.maxHeadersCount).toBe(0)
  })
})

// As the process reads its environment: an empty value is a value (see test/fixtures/config.ts).
const read = (env: Record<string, string>) => Effect.runSync(Effect.result(serverLimitsConfig.parse(envProvider(env))))

describe("server limit settings", () => {
  it("defaults: headers 10 s, request 60 s, keep-alive 5 s, 100 headers, 1024 connections (256 per client), 128 MiB of bodies (2 s wait)", () => {
    expect(read({})).toEqual(Result.succeed(DEFAULT_SERVER_LIMITS))
    expect(DEFAULT_SERVER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 5_000,
      maxHeaders: 100,
      maxConnections: 1024,
      maxConnectionsPerClient: 256,
      maxBodyBytesInFlight: 128 * 1024 * 1024,
      bodyBudgetWaitMs: 2_000,
      maxBodyBytesPerClient: 32 * 1024 * 1024,
      minBodyBytesPerSecond: 16 * 1024,
      firstByteTimeoutMs: 2_000,
      idleCollectMs: 10_000,
      clientAddress: { header: undefined, hops: 1 },
      probePaths: [],
      streams: undefined
    })
  })

  it("reads each variable", () => {
    expect(read({
      SVC_HEADERS_TIMEOUT_MS: "2000",
      SVC_REQUEST_TIMEOUT_MS: "30000",
      SVC_KEEP_ALIVE_TIMEOUT_MS: " 65000 ",
      SVC_MAX_HEADERS: "50",
      SVC_MAX_CONNECTIONS: "256",
      SVC_MAX_CONNECTIONS_PER_CLIENT: "16",
      SVC_MAX_BODY_BYTES_IN_FLIGHT: "1048576",
      SVC_BODY_BUDGET_WAIT_MS: "0",
      SVC_MIN_BODY_BYTES_PER_SECOND: "0",
      SVC_FIRST_BYTE_TIMEOUT_MS: "500",
      SVC_IDLE_COLLECT_MS: "1500",
      SVC_CLIENT_ADDRESS_HEADER: "X-Forwarded-For",
      SVC_TRUSTED_PROXY_HOPS: "2"
    })).toEqual(Result.succeed({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 30000,
      keepAliveTimeoutMs: 65000,
      maxHeaders: 50,
      maxConnections: 256,
      maxConnectionsPerClient: 16,
      maxBodyBytesInFlight: 1048576,
      bodyBudgetWaitMs: 0,
      // Unset: a quarter of the budget.
      maxBodyBytesPerClient: 262144,
      minBodyBytesPerSecond: 0,
      firstByteTimeoutMs: 500,
      idleCollectMs: 1500,
      clientAddress: { header: "x-forwarded-for", hops: 2 },
      probePaths: [],
      streams: undefined
    }))
    expect(Result.getOrThrow(read({ SVC_MAX_BODY_BYTES_PER_CLIENT: "1000" })).maxBodyBytesPerClient).toBe(1000)
    // The first-byte timeout follows a lower header timeout, and may not exceed one set.
    expect(Result.getOrThrow(read({ SVC_HEADERS_TIMEOUT_MS: "800" })).firstByteTimeoutMs).toBe(800)
    expect(Result.isFailure(read({ SVC_HEADERS_TIMEOUT_MS: "800", SVC_FIRST_BYTE_TIMEOUT_MS: "900" }))).toBe(true)
  })

  const names = [
    "SVC_HEADERS_TIMEOUT_MS",
    "SVC_REQUEST_TIMEOUT_MS",
    "SVC_KEEP_ALIVE_TIMEOUT_MS",
    "SVC_MAX_HEADERS",
    "SVC_MAX_CONNECTIONS",
    "SVC_MAX_CONNECTIONS_PER_CLIENT",
    "SVC_MAX_BODY_BYTES_IN_FLIGHT"
  ]

  it("refuses every invalid value, naming the variable, the value and what was expected", () => {
    for (const name of names) {
      for (const value of ["abc", "0", "-5", "1.5", "", "1e3", "0x10", "99999999999999999999", "10 ms"]) {
        const result = read({ [name]: value })
        expect(Result.isFailure(result), `${name}=${value}`).toBe(true)
        if (Result.isFailure(result)) {
          const message = result.failure.message
          expect(message, `${name}=${value}`).toContain(`${name}=${JSON.stringify(value)}`)
          expect(message).toMatch(/expected a whole number of \w+ from 1 to \d+/)
        }
      }
    }
    expect(Result.isFailure(read({ SVC_MAX_HEADERS: "10001" }))).toBe(true)
    expect(Result.isFailure(read({ SVC_MAX_CONNECTIONS: "1000001" }))).toBe(true)
    for (const value of ["abc", "-1", "1.5", "60001"]) expect(Result.isFailure(read({ SVC_BODY_BUDGET_WAIT_MS: value }))).toBe(true)
  })

  it("refuses a header timeout longer than the request timeout (Node would throw)", () => {
    const result = read({ SVC_HEADERS_TIMEOUT_MS: "20000", SVC_REQUEST_TIMEOUT_MS: "10000" })
    expect(Result.isFailure(result)).toBe(true)
    if (Result.isFailure(result)) {
      expect(result.failure.message).toContain("SVC_HEADERS_TIMEOUT_MS=20000")
      expect(result.failure.message).toContain("SVC_REQUEST_TIMEOUT_MS (10000)")
    }
  })
})
