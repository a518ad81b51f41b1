/**
 * Requests abandoned while their body is arriving, on raw sockets: the headers (with a
 * Content-Length, or chunked), part of the body, then the connection destroyed. What a dropped
 * mobile upload or a client timeout looks like to the server. Shared by the abort tests and
 * the load test (bench/).
 */
import * as net from "node:net"

export interface AbortTarget {
  readonly method: "POST" | "PUT" | "PATCH" | "DELETE"
  readonly path: string
  /** Chunked instead of a declared Content-Length. */
  readonly chunked?: boolean
}

/** One abandoned request: headers and `sentBytes` of a `declaredBytes` body, then destroy after `holdMs`. */
export const abortOne = (
  port: number,
  target: AbortTarget,
  options: {
    readonly declaredBytes?: number
    readonly sentBytes?: number
    readonly holdMs?: number
    /** The client address to connect from (another loopback address: another client to the server). */
    readonly localAddress?: string
  } = {}
): Promise<void> =>
  new Promise((resolve) => {
    const declared = options.declaredBytes ?? 4096
    const part = `{"a":"${"x".repeat(Math.max(0, Math.min(options.sentBytes ?? 100, declared) - 6))}`
    const socket = net.connect({ port, host: "127.0.0.1", ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }) }, () => {
      const length = target.chunked ? "transfer-encoding: chunked" : `content-length: ${declared}`
      const body = target.chunked ? `${part.length.toString(16)}\r\n${part}\r\n` : part
      socket.write(
        `${target.method} ${target.path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${length}\r\n\r\n${body}`
      )
      setTimeout(() => {
        socket.destroy()
        resolve()
      }, options.holdMs ?? 10)
    })
    socket.on("error", () => resolve())
  })

/** `count` abandoned requests over `targets` in turn, `concurrency` at a time. */
export const abortFlood = async (
  port: number,
  targets: ReadonlyArray<AbortTarget>,
  count: number,
  concurrency = 50,
  options: Parameters<typeof abortOne>[2] = {}
): Promise<void> => {
  let next = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      await abortOne(port, targets[i % targets.length]!, options)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
}
