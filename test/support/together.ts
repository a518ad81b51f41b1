/**
 * Requests written together, the way a double-click or two clients at once reach a server:
 * one keep-alive connection per request, all connected (and warmed by a first request, unless
 * `cold`) before any of them is written, then every request written in the same tick of this process.
 */
import { connect, type Socket } from "node:net"

export interface RawRequest {
  /** The server to send it to, when not the one `sendTogether` names (e.g. another replica). */
  readonly url?: string
  readonly method: string
  readonly path: string
  readonly body?: unknown
  readonly headers?: Readonly<Record<string, string>>
}

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  /** The parsed JSON body, or undefined when it is empty or not JSON. */
  readonly body: any
}

const format = (host: string, r: RawRequest): string => {
  const body = r.body === undefined ? "" : JSON.stringify(r.body)
  const headers: Record<string, string> = {
    host,
    connection: "keep-alive",
    ...(r.body !== undefined ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) } : {}),
    ...r.headers
  }
  return `${r.method} ${r.path} HTTP/1.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`
}

/** Reads one response (Content-Length framed, as the gateway's JSON answers are) off a socket. */
const readResponse = (socket: Socket): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk])
      const end = buffer.indexOf("\r\n\r\n")
      if (end < 0) return
      const head = buffer.subarray(0, end).toString("latin1").split("\r\n")
      const status = Number(head[0]!.split(" ")[1])
      const headers: Record<string, string> = {}
      for (const line of head.slice(1)) {
        const i = line.indexOf(":")
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim()
      }
      const length = Number(headers["content-length"] ?? "0")
      if (buffer.length < end + 4 + length) return
      const text = buffer.subarray(end + 4, end + 4 + length).toString("utf8")
      socket.off("data", onData)
      socket.off("error", reject)
      let body: unknown = undefined
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        body = undefined
      }
      resolve({ status, headers, text, body })
    }
    socket.on("data", onData)
    socket.once("error", reject)
  })

/**
 * Sends each request on its own connection to its server (`url`, or the request's own), all
 * written in one tick, and returns the answers in order. The connections are closed afterwards.
 */
/**
 * How long the last `sendTogether` took to write all its requests (ms): on a loaded machine this
 * process can be descheduled mid-loop, and requests written milliseconds apart are not "together".
 */
export let lastWriteSpreadMs = 0

export const sendTogether = async (
  url: string,
  requests: ReadonlyArray<RawRequest>,
  /** Around the writes, once every connection is set up (e.g. to stop and resume a server). */
  around: { readonly beforeWrite?: () => void; readonly afterWrite?: () => void } = {},
  /**
   * Written as soon as each connection is open, without the first exchange: the server may not
   * have accepted them yet, as with a client that opens a connection per request.
   */
  cold = false
): Promise<Array<RawResponse>> => {
  const targets = requests.map((r) => new URL(r.url ?? url))
  const sockets = await Promise.all(targets.map((t) =>
    new Promise<Socket>((resolve, reject) => {
      const s = connect(Number(t.port), t.hostname, () => resolve(s))
      s.setNoDelay(true)
      s.once("error", reject)
    })
  ))
  try {
    // A first exchange on each: the connection is fully set up (accepted, parser ready) before the race.
    if (!cold) await Promise.all(sockets.map((s, i) => {
      const answer = readResponse(s)
      s.write(format(targets[i]!.host, { method: "GET", path: "/v1/health" }))
      return answer
    }))
    const answers = sockets.map((s) => readResponse(s))
    const wire = requests.map((r, i) => format(targets[i]!.host, r))
    around.beforeWrite?.()
    const started = performance.now()
    for (let i = 0; i < sockets.length; i++) sockets[i]!.write(wire[i]!)
    lastWriteSpreadMs = performance.now() - started
    around.afterWrite?.()
    return await Promise.all(answers)
  } finally {
    for (const s of sockets) s.destroy()
  }
}
