/**
 * How the gateway reads a request body on Node (src/http/input/jsonInput.ts collects the
 * IncomingMessage's chunks itself): whatever the framing and however the bytes are split over
 * time, the handler sees the whole body once; a client that leaves mid-body leaves nothing
 * behind, and the server goes on serving.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import * as net from "node:net"
import { setImmediate as turn } from "node:timers/promises"
import { raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"
import { serverPort } from "./support.js"

const files = `/v1/tasks/${EXPENSE_TASK}/files`

/** Sends `head` then `pieces` one event-loop turn apart; resolves with what the server answered before it closed. */
const sendInPieces = (port: number, head: string, pieces: ReadonlyArray<Buffer>, options: { readonly leave?: boolean } = {}) =>
  new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let received = ""
    socket.on("data", (d: Buffer) => {
      received += d.toString("latin1")
      // One answer is all this test reads: close once its body is complete.
      const at = received.indexOf("\r\n\r\n")
      const length = /content-length: (\d+)/i.exec(received)
      if (at !== -1 && length !== null && received.length - at - 4 >= Number(length[1])) socket.end()
    })
    socket.on("error", reject)
    socket.on("close", () => resolve(received))
    socket.on("connect", async () => {
      socket.write(head)
      for (const piece of pieces) {
        socket.write(piece)
        await turn()
      }
      if (options.leave === true) socket.destroy()
    })
  })

const split = (bytes: Buffer, size: number): Array<Buffer> => {
  const out: Array<Buffer> = []
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size))
  return out
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)
const bodyOf = (answer: string) => JSON.parse(Buffer.from(answer.slice(answer.indexOf("\r\n\r\n") + 4), "latin1").toString("utf8"))

describe("request bodies on the gateway's Node server", () => {
  it.effect("a body split into hundreds of small writes arrives whole (Content-Length and chunked)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const bytes = randomBytes(60_000)
        // Multi-byte characters cut across writes must still decode as written.
        const fileName = "résumé-€.bin"
        const body = Buffer.from(JSON.stringify({ source: "pieces", fileName, data: bytes.toString("base64") }))
        const declared = yield* Effect.promise(() =>
          sendInPieces(
            port,
            `POST ${files} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
            split(body, 199)
          )
        )
        expect(statusOf(declared)).toBe(201)
        expect(bodyOf(declared)).toMatchObject({ filename: fileName, sizeBytes: bytes.length })

        const framed = split(body, 997).map((p) => Buffer.concat([Buffer.from(`${p.length.toString(16)}\r\n`), p, Buffer.from("\r\n")]))
        const chunked = yield* Effect.promise(() =>
          sendInPieces(
            port,
            `POST ${files} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`,
            [...framed, Buffer.from("0\r\n\r\n")]
          )
        )
        expect(statusOf(chunked)).toBe(201)

        for (const answer of [declared, chunked]) {
          const download = yield* raw("GET", bodyOf(answer).downloadUrl)
          expect(download.status).toBe(200)
          expect(download.bytes.equals(bytes)).toBe(true)
        }
      })
    ))

  it.effect("a client that leaves mid-body: nothing stored, the next requests are served", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const before = (yield* raw("GET", files)).body
        const body = Buffer.from(JSON.stringify({ source: "left", data: randomBytes(30_000).toString("base64") }))
        for (let i = 0; i < 5; i++) {
          const answer = yield* Effect.promise(() =>
            sendInPieces(
              port,
              `POST ${files} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
              split(body.subarray(0, body.length / 2), 4096),
              { leave: true }
            )
          )
          expect(answer).toBe("")
        }
        expect((yield* raw("GET", files)).body).toEqual(before)
        const ok = yield* raw("POST", files, { source: "after", data: Buffer.from("fine").toString("base64") })
        expect(ok.status).toBe(201)
      })
    ))

  it.effect("Expect: 100-continue: the client is told to go on, then its body is read (and a refused body gets its answer instead)", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const body = Buffer.from(JSON.stringify({ source: "continue", data: Buffer.from("go on").toString("base64") }))
        // A client that waits for `100 Continue` before it sends the body (curl does, for a while).
        const waitForContinue = (head: string) =>
          new Promise<string>((resolve, reject) => {
            const socket = net.connect(port, "127.0.0.1")
            let received = ""
            const timer = setTimeout(() => socket.destroy(), 3000)
            socket.on("data", (d: Buffer) => {
              const before = received
              received += d.toString("latin1")
              if (!before.includes("100 Continue") && received.startsWith("HTTP/1.1 100 Continue\r\n\r\n")) socket.write(body)
            })
            socket.on("error", reject)
            socket.on("close", () => {
              clearTimeout(timer)
              resolve(received)
            })
            socket.on("connect", () => socket.write(head))
          })
        const answer = yield* Effect.promise(() =>
          waitForContinue(
            `POST ${files} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n` +
              "expect: 100-continue\r\nconnection: close\r\n\r\n"
          )
        )
        expect(answer.startsWith("HTTP/1.1 100 Continue\r\n\r\n")).toBe(true)
        const final = answer.slice("HTTP/1.1 100 Continue\r\n\r\n".length)
        expect(statusOf(final)).toBe(201)
        expect(bodyOf(final)).toMatchObject({ filename: expect.stringContaining("continue"), sizeBytes: 5 })
        // Over the body limit: the 413 at once, no 100 first.
        const refused = yield* Effect.promise(() =>
          waitForContinue(
            `POST ${files} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${64 * 1024 * 1024 * 1024}\r\n` +
              "expect: 100-continue\r\nconnection: close\r\n\r\n"
          )
        )
        expect(statusOf(refused)).toBe(413)
      })
    ))
})
