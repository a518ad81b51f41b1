/**
 * Load for the fault suite: keep-alive clients on raw node:http (one socket each), recording
 * for every request when its bytes were handed to the OS (`sentAt`, the request's `finish`),
 * and what came back. "Sent before the signal" is then exact: `sentAt < signalAt`.
 */
import * as http from "node:http"
import type { Socket } from "node:net"

export interface Exchange {
  readonly client: number
  readonly n: number
  /** performance.now() when the whole request had been written to the socket; undefined if it never was. */
  sentAt?: number
  status?: number | undefined
  /** The response's Connection header. */
  connection?: string | undefined
  body?: string
  /** The error code (ECONNRESET, ECONNREFUSED, ...) when no answer came. */
  error?: string
  /** The socket it went out on. */
  socket?: Socket
  /** It went out on a keep-alive connection that had carried an answer before. */
  reused?: boolean
  /** On a reused connection: ms from the end of its previous answer to this request's start. */
  idleMs?: number
}

/** When each socket's last answer ended (performance.now()). */
const lastAnswerAt = new WeakMap<Socket, number>()

export interface Request {
  readonly method: string
  readonly url: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** One request on `agent`, settled with what happened (never rejects). */
export const exchange = (agent: http.Agent, request: Request, client = 0, n = 0): Promise<Exchange> =>
  new Promise((resolve) => {
    const ex: Exchange = { client, n }
    const body = request.body === undefined ? undefined : JSON.stringify(request.body)
    const req = http.request(request.url, {
      method: request.method,
      agent,
      headers: {
        ...(body === undefined ? {} : { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }),
        ...request.headers
      }
    }, (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => (text += d))
      res.on("end", () => {
        if (ex.socket !== undefined) lastAnswerAt.set(ex.socket, performance.now())
        ex.status = res.statusCode
        ex.connection = res.headers.connection
        ex.body = text
        resolve(ex)
      })
      res.on("error", (e: NodeJS.ErrnoException) => {
        ex.error = e.code ?? e.message
        resolve(ex)
      })
    })
    req.on("socket", (socket) => {
      ex.socket = socket
      ex.reused = req.reusedSocket
      const last = lastAnswerAt.get(socket)
      if (req.reusedSocket && last !== undefined) ex.idleMs = performance.now() - last
    })
    req.on("finish", () => (ex.sentAt = performance.now()))
    req.on("error", (e: NodeJS.ErrnoException) => {
      ex.error = e.code ?? e.message
      resolve(ex)
    })
    req.end(body)
  })

export interface Load {
  /** Every exchange so far, in the order they settled. */
  readonly exchanges: Array<Exchange>
  /** Stops every client after its request in flight; settles when all have stopped. */
  readonly stop: () => Promise<void>
  /** Settles when every client has stopped (after `stop`, or when each has seen an error). */
  readonly done: Promise<void>
}

/**
 * `clients` keep-alive clients, each on its own socket, sending `request(client, n)` back to
 * back. A client stops at its first transport error (the server is gone) or at `stop()`.
 */
export const keepAliveLoad = (clients: number, request: (client: number, n: number) => Request): Load => {
  const exchanges: Array<Exchange> = []
  let stopped = false
  const agents: Array<http.Agent> = []
  const loops = Array.from({ length: clients }, async (_, client) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    agents.push(agent)
    for (let n = 0; !stopped; n++) {
      const pending = exchange(agent, request(client, n), client, n)
      const ex = await pending
      exchanges.push(ex)
      if (ex.error !== undefined) break
    }
  })
  const done = Promise.all(loops).then(() => {
    for (const agent of agents) agent.destroy()
  })
  return {
    exchanges,
    done,
    stop: async () => {
      stopped = true
      await done
    }
  }
}
