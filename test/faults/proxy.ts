/**
 * The fault proxy of the fault-injection suite: a TCP proxy on a loopback port in front of a
 * real server (usually the workspace service of `npm run workspace`), which injects network
 * faults on command. Point the process under test at `proxy.url` (e.g.
 * `SVC_WORKSPACE_URL=proxy.url`) and switch faults from the test while it runs:
 *
 * ```ts
 * const proxy = await startFaultProxy(workspace.url)
 * const gw = await startService({ SVC_WORKSPACE_URL: proxy.url, SVC_TENANT_SLUG: "acme" })
 * proxy.set({ kind: "delay", ms: 2000 })            // every byte arrives 2 s late
 * proxy.set({ kind: "stall", direction: "down", afterBytes: 200 }) // answers stop after 200 bytes
 * proxy.set({ kind: "reset" })                      // every connection reset (RST)
 * proxy.set({ kind: "pass" })                       // healthy again; stalled bytes flow on
 * await proxy.close()                               // in afterAll / finally
 * ```
 *
 * Faults (one in force at a time; `set` replaces it). They apply to connections already open
 * as well as new ones, which matters because HTTP clients keep connections alive: the fault
 * in force is looked up for every chunk, in each direction, when it arrives.
 *
 * | Fault | New connections | Bytes on open connections |
 * |---|---|---|
 * | `pass` | accepted and connected to the target | forwarded (first the ones a stall held) |
 * | `delay {ms}` | accepted | each chunk forwarded `ms` later, order kept |
 * | `stall` | accepted, left waiting | held, not forwarded, not answered; `pass` releases them |
 * | `drop` | accepted and closed at once (FIN) | both sides closed (FIN) at the next chunk |
 * | `reset` | accepted and reset at once (RST) | both sides reset at the next chunk |
 * | `refuse` | refused (the port stops listening: ECONNREFUSED) | both sides reset at once |
 *
 * `delay` and `stall` take `direction`: `"up"` (client to target, the requests), `"down"`
 * (target to client, the answers) or `"both"` (default). `afterBytes` lets that many bytes per
 * connection and direction pass after the fault is set before it applies (e.g. headers go
 * through, then the body stalls). `drop` and `reset` apply to both directions.
 *
 * `cutAll("reset" | "drop")` closes every open connection now, whatever the fault.
 * `stats()` counts accepted connections, open ones and bytes forwarded each way; `observe(fn)`
 * sees every chunk as it arrives (before any fault), so a test can count the requests the
 * process under test sent upstream (retries, a cached probe):
 * `proxy.observe((dir, chunk) => dir === "up" && (n += count(chunk, "GET /workspace/tenants/")))`.
 *
 * The proxy runs in the test's own process; `close()` resets what is open and stops listening.
 */
import * as net from "node:net"

export type Direction = "up" | "down" | "both"

export type Fault =
  | { readonly kind: "pass" }
  | { readonly kind: "delay"; readonly ms: number; readonly direction?: Direction; readonly afterBytes?: number }
  | { readonly kind: "stall"; readonly direction?: Direction; readonly afterBytes?: number }
  | { readonly kind: "drop" }
  | { readonly kind: "reset" }
  | { readonly kind: "refuse" }

export interface ProxyStats {
  /** Connections accepted since the start (refused ones are not counted). */
  readonly accepted: number
  /** Connections open now. */
  readonly open: number
  /** Bytes forwarded to the target. */
  readonly bytesUp: number
  /** Bytes forwarded to the client. */
  readonly bytesDown: number
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>` of the proxy. */
  readonly url: string
  readonly port: number
  /** Puts a fault in force (for connections already open, too). */
  readonly set: (fault: Fault) => Promise<void>
  /** The fault in force. */
  readonly fault: () => Fault
  /** Closes every open connection now: `reset` (RST, default) or `drop` (FIN). */
  readonly cutAll: (how?: "reset" | "drop") => void
  readonly stats: () => ProxyStats
  /** Calls `listener` with every chunk as it arrives, before any fault applies; returns the unsubscribe. */
  readonly observe: (listener: (direction: "up" | "down", chunk: Buffer) => void) => () => void
  /** Resets every connection and stops listening. */
  readonly close: () => Promise<void>
}

interface Pipe {
  readonly to: () => net.Socket | undefined
  readonly direction: "up" | "down"
  /** Chunks held by a stall, or waiting for their delay. */
  readonly queue: Array<Buffer>
  /** Bytes that passed this pipe since the fault in force was set. */
  passed: number
  /** A delayed chunk is on its way: keep order behind it. */
  busy: boolean
}

const applies = (direction: Direction | undefined, pipe: "up" | "down") =>
  direction === undefined || direction === "both" || direction === pipe

/**
 * Starts a fault proxy on a free loopback port in front of `target` (`http://host:port` or
 * `host:port`), passing bytes through until told otherwise.
 */
export const startFaultProxy = async (target: string, initial: Fault = { kind: "pass" }): Promise<FaultProxy> => {
  const { hostname, port: targetPort } = new URL(target.includes("://") ? target : `tcp://${target}`)
  const host = hostname.replace(/^\[|\]$/g, "")
  let fault: Fault = initial
  let accepted = 0
  let bytesUp = 0
  let bytesDown = 0
  const connections = new Set<{ client: net.Socket; upstream: net.Socket | undefined; pipes: Array<Pipe> }>()

  const kill = (socket: net.Socket | undefined, how: "reset" | "drop") => {
    if (socket === undefined || socket.destroyed) return
    if (how === "reset") socket.resetAndDestroy()
    else socket.end(() => socket.destroy())
  }

  const forward = (pipe: Pipe, chunk: Buffer) => {
    const to = pipe.to()
    if (to === undefined || to.destroyed) return
    pipe.passed += chunk.length
    if (pipe.direction === "up") bytesUp += chunk.length
    else bytesDown += chunk.length
    to.write(chunk)
  }

  /** Moves what a pipe holds on, as far as the fault in force lets it. */
  const pump = (pipe: Pipe) => {
    while (pipe.queue.length > 0 && !pipe.busy) {
      const f = fault
      const gated = (f.kind === "stall" || f.kind === "delay") && applies(f.direction, pipe.direction)
      const free = gated ? Math.max(0, (f.afterBytes ?? 0) - pipe.passed) : Infinity
      if (free > 0) {
        // The part of the chunk still under afterBytes (or all of it) goes through now.
        const chunk = pipe.queue[0]!
        if (chunk.length <= free) {
          pipe.queue.shift()
          forward(pipe, chunk)
        } else {
          pipe.queue[0] = chunk.subarray(free)
          forward(pipe, chunk.subarray(0, free))
        }
        continue
      }
      if (f.kind === "stall") return
      if (f.kind === "delay") {
        const chunk = pipe.queue.shift()!
        pipe.busy = true
        setTimeout(() => {
          pipe.busy = false
          forward(pipe, chunk)
          pump(pipe)
        }, f.ms)
        return
      }
    }
  }

  const connectionOf = (pipe: Pipe) => [...connections].find((c) => c.pipes.includes(pipe))

  const observers = new Set<(direction: "up" | "down", chunk: Buffer) => void>()

  const onChunk = (pipe: Pipe, chunk: Buffer) => {
    for (const observer of observers) observer(pipe.direction, chunk)
    if (fault.kind === "drop" || fault.kind === "reset" || fault.kind === "refuse") {
      const c = connectionOf(pipe)
      const how = fault.kind === "drop" ? "drop" : "reset"
      kill(c?.client, how)
      kill(c?.upstream, how)
      return
    }
    pipe.queue.push(chunk)
    pump(pipe)
  }

  const server = net.createServer({ pauseOnConnect: false }, (client) => {
    if (fault.kind === "drop" || fault.kind === "reset" || fault.kind === "refuse") {
      kill(client, fault.kind === "drop" ? "drop" : "reset")
      return
    }
    accepted++
    const connection: { client: net.Socket; upstream: net.Socket | undefined; pipes: Array<Pipe> } = {
      client,
      upstream: undefined,
      pipes: []
    }
    const up: Pipe = { to: () => connection.upstream, direction: "up", queue: [], passed: 0, busy: false }
    const down: Pipe = { to: () => client, direction: "down", queue: [], passed: 0, busy: false }
    connection.pipes.push(up, down)
    connections.add(connection)
    const upstream = net.connect({ host, port: Number(targetPort) })
    connection.upstream = upstream
    upstream.setNoDelay(true)
    client.setNoDelay(true)
    upstream.on("connect", () => pump(up))
    client.on("data", (chunk: Buffer) => onChunk(up, chunk))
    upstream.on("data", (chunk: Buffer) => onChunk(down, chunk))
    // A side that ends or fails takes the other with it (after what is held was written: none
    // is, while a stall holds it; that is the point of a stall).
    const finish = (other: net.Socket, pipe: Pipe, hadError: boolean) => {
      if (hadError) kill(other, "reset")
      else if (pipe.queue.length === 0 && !pipe.busy) other.end()
      else {
        const wait = setInterval(() => {
          if (other.destroyed || (pipe.queue.length === 0 && !pipe.busy)) {
            clearInterval(wait)
            if (!other.destroyed) other.end()
          }
        }, 20)
        wait.unref()
      }
    }
    client.on("end", () => finish(upstream, up, false))
    upstream.on("end", () => finish(client, down, false))
    client.on("error", () => kill(upstream, "reset"))
    upstream.on("error", () => kill(client, "reset"))
    const closed = () => {
      if (client.destroyed && upstream.destroyed) connections.delete(connection)
    }
    client.on("close", closed)
    upstream.on("close", closed)
  })

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject)
        resolve((server.address() as net.AddressInfo).port)
      })
    })
  const port = await listen(0)

  const cutAll = (how: "reset" | "drop" = "reset") => {
    for (const c of connections) {
      kill(c.client, how)
      kill(c.upstream, how)
    }
  }

  const set = async (next: Fault) => {
    const wasRefusing = fault.kind === "refuse"
    fault = next
    for (const c of connections) for (const p of c.pipes) p.passed = 0
    if (next.kind === "refuse") {
      cutAll("reset")
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()))
      return
    }
    if (wasRefusing && !server.listening) await listen(port)
    for (const c of connections) for (const p of c.pipes) pump(p)
  }

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    set,
    fault: () => fault,
    cutAll,
    stats: () => ({ accepted, open: connections.size, bytesUp, bytesDown }),
    observe: (listener) => {
      observers.add(listener)
      return () => observers.delete(listener)
    },
    close: async () => {
      cutAll("reset")
      if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
