/** Loopback HTTP servers for the file-ingest tests; every one closes its connections on close(). */
import * as http from "node:http"
import type { AddressInfo, LookupFunction, Socket } from "node:net"
import * as dns from "node:dns"

export interface SeenRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
}

export interface TestServer {
  readonly server: http.Server
  readonly port: number
  /** Requests that reached the handler. */
  readonly requests: Array<SeenRequest>
  /** TCP connections accepted (a refused SSRF attempt must not even connect). */
  readonly connections: number
  readonly url: (path: string) => string
  readonly close: () => Promise<void>
}

export const startServer = async (
  handler: http.RequestListener = (_req, res) => res.end("ok"),
  host = "127.0.0.1"
): Promise<TestServer> => {
  const requests: Array<SeenRequest> = []
  const sockets = new Set<Socket>()
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers })
    handler(req, res)
  })
  const state = { connections: 0 }
  server.on("connection", (socket) => {
    state.connections++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  const urlHost = host.includes(":") ? "127.0.0.1" : host
  return {
    server,
    port,
    requests,
    get connections() {
      return state.connections
    },
    url: (path) => `http://${urlHost}:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** A server that must see nothing: dual-stack when the host allows it, to catch ::1 as well as 127.0.0.1. */
export const startTarget = async (): Promise<TestServer> => {
  const handler: http.RequestListener = (_req, res) => res.end("you should not see this")
  try {
    return await startServer(handler, "::")
  } catch {
    return await startServer(handler, "127.0.0.1")
  }
}

/** A port nothing listens on (bound then released). */
export const closedPort = async (): Promise<number> => {
  const s = http.createServer()
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()))
  const port = (s.address() as AddressInfo).port
  await new Promise<void>((resolve) => s.close(() => resolve()))
  return port
}

/**
 * Stand-in DNS for names the tests need: `loopback.test` → 127.0.0.1, `v6loop.test` → ::1,
 * `mixed.test` → a public and a loopback address, `nxdomain.test` → ENOTFOUND,
 * `blackhole.test` → never answers. Anything else goes to dns.lookup.
 */
const TABLE: Record<string, ReadonlyArray<{ address: string; family: 4 | 6 }>> = {
  "loopback.test": [{ address: "127.0.0.1", family: 4 }],
  "v6loop.test": [{ address: "::1", family: 6 }],
  "mixed.test": [{ address: "93.184.216.34", family: 4 }, { address: "127.0.0.1", family: 4 }],
  "private.test": [{ address: "10.1.2.3", family: 4 }]
}

export const testLookup: LookupFunction = (hostname, options, callback) => {
  const cb = callback as (...args: Array<unknown>) => void
  if (hostname === "blackhole.test") return
  if (hostname === "nxdomain.test") {
    const err = Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname })
    process.nextTick(() => cb(err))
    return
  }
  const entries = TABLE[hostname]
  if (entries === undefined) return dns.lookup(hostname, options, callback)
  process.nextTick(() => {
    if (options.all) cb(null, entries)
    else cb(null, entries[0]!.address, entries[0]!.family)
  })
}
