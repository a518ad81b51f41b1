/**
 * A real webhook receiver for the tests: a node:http server on a free loopback port recording
 * every request (per path) and answering as each path's handler says (default 204).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"

export interface Received {
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

export type Answer = { readonly status: number; readonly headers?: Record<string, string>; readonly delayMs?: number }

export interface Receiver {
  readonly port: number
  readonly url: (path: string) => string
  readonly received: (path: string) => ReadonlyArray<Received>
  /** How `path` answers from now on (a function of the request's 0-based count on that path). */
  readonly answer: (path: string, f: (n: number) => Answer) => void
  /** Resolves once `path` has `count` requests matching `match`; rejects after `timeoutMs`. */
  readonly waitFor: (
    path: string,
    count: number,
    timeoutMs?: number,
    match?: (r: Received) => boolean
  ) => Promise<ReadonlyArray<Received>>
  /** The most requests `path` held open at once (answered or abandoned by the sender). */
  readonly maxInFlight: (path: string) => number
  readonly close: () => Promise<void>
}

export const startReceiver = async (port = 0): Promise<Receiver> => {
  const log = new Map<string, Array<Received>>()
  const handlers = new Map<string, (n: number) => Answer>()
  const open = new Map<string, number>()
  const peak = new Map<string, number>()
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0]!
      const list = log.get(path) ?? []
      const n = list.length
      list.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() })
      log.set(path, list)
      const answer = handlers.get(path)?.(n) ?? { status: 204 }
      const now = (open.get(path) ?? 0) + 1
      open.set(path, now)
      peak.set(path, Math.max(peak.get(path) ?? 0, now))
      res.once("close", () => open.set(path, (open.get(path) ?? 1) - 1))
      const send = () => {
        if (res.destroyed) return
        res.writeHead(answer.status, answer.headers ?? {})
        res.end()
      }
      if (answer.delayMs !== undefined) setTimeout(send, answer.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const actual = (server.address() as { port: number }).port
  return {
    port: actual,
    url: (path) => `http://127.0.0.1:${actual}${path}`,
    received: (path) => log.get(path) ?? [],
    answer: (path, f) => void handlers.set(path, f),
    waitFor: async (path, count, timeoutMs = 15_000, match = () => true) => {
      const until = Date.now() + timeoutMs
      for (;;) {
        const got = (log.get(path) ?? []).filter(match)
        if (got.length >= count) return got
        if (Date.now() > until) {
          throw new Error(`receiver ${path}: ${got.length} of ${count} requests after ${timeoutMs} ms`)
        }
        await new Promise((r) => setTimeout(r, 25))
      }
    },
    maxInFlight: (path) => peak.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Polls `probe` until it returns a value (not undefined); rejects after `timeoutMs`. */
export const until = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
