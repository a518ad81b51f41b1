/**
 * A whole answer leaves in one socket write (src/http/server/response.ts): the gateway's JSON
 * answers on kept-alive connections go out as one `write`, not Node's strict-length `writev` of
 * the answer and an empty final chunk; bodies whose length is not the declared one are still
 * Node's error; bodies written in parts are still checked.
 */
import { it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import { Socket } from "node:net"
import { afterEach, describe, expect } from "vitest"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { serverPort, withGateway } from "../support/gateway.js"

type Chunks = ReadonlyArray<{ readonly chunk: string | Uint8Array }>

/** Counts the sockets' writev calls that carry an HTTP answer, while `body` runs. */
const countAnswerWritevs = () => {
  const original = Socket.prototype._writev!
  const counter = { writevs: 0 }
  Socket.prototype._writev = function(this: Socket, chunks: Chunks, cb: (error?: Error | null) => void) {
    const first = chunks[0]?.chunk
    const head = typeof first === "string" ? first : Buffer.from(first ?? []).toString("latin1")
    if (head.startsWith("HTTP/1.1")) counter.writevs++
    return original.call(this, chunks as never, cb)
  }
  return { counter, restore: () => void (Socket.prototype._writev = original) }
}

let restore: (() => void) | undefined
afterEach(() => {
  restore?.()
  restore = undefined
})

const get = (agent: http.Agent, port: number, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    http.get({ host: "127.0.0.1", port, path, agent }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
    }).on("error", reject)
  })

describe("one write per whole answer", () => {
  it.effect("JSON answers on a kept-alive connection go out without a writev", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const port = yield* serverPort
        const spy = countAnswerWritevs()
        restore = spy.restore
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        const answers = yield* Effect.promise(async () => {
          const out = []
          for (const path of ["/v1/health", "/v1/entities", "/v1/health", "/v1/entities/nope/tasks", "/v1/nowhere"]) {
            out.push(await get(agent, port, path))
          }
          return out
        })
        agent.destroy()
        spy.restore()
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 400, 404])
        expect(JSON.parse(answers[0]!.body)).toEqual({ status: "ok" })
        expect(JSON.parse(answers[1]!.body).length).toBeGreaterThan(0)
        expect(spy.counter.writevs).toBe(0)
      })
    ))

  /** A bare server of ours whose handler writes the way the Effect adapter does (strict lengths). */
  const serve = (handler: (res: http.ServerResponse) => void) =>
    new Promise<{ port: number; server: http.Server; errors: Array<unknown> }>((resolve) => {
      const errors: Array<unknown> = []
      const server = createGatewayServer(1024)
      server.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
        res.strictContentLength = true
        try {
          handler(res)
        } catch (e) {
          errors.push(e)
          res.destroy()
        }
      })
      server.listen(0, "127.0.0.1", () => resolve({ port: (server.address() as { port: number }).port, server, errors }))
    })

  const close = (server: http.Server) => new Promise<void>((done) => server.close(() => done()))

  it("a body longer or shorter than the declared length is still refused by Node", async () => {
    for (const body of ["abc", "abcdefghijkl", "ä"]) {
      const { port, server, errors } = await serve((res) => {
        res.writeHead(200, { "content-type": "text/plain", "content-length": "10" })
        res.end(body)
      })
      await get(new http.Agent(), port, "/").catch(() => undefined)
      await close(server)
      expect(errors.map((e) => (e as { code?: string }).code)).toEqual(["ERR_HTTP_CONTENT_LENGTH_MISMATCH"])
    }
  })

  it("a body in parts is checked as before; bytes and text of any script arrive whole", async () => {
    const text = "Grüße, 東京, مرحبا, 🧾"
    const { port, server, errors } = await serve((res) => {
      if (res.req.url === "/parts") {
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(text) + 1) })
        res.write(text)
        res.end("!!")
      } else if (res.req.url === "/bytes") {
        const bytes = Buffer.from(text)
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(bytes.length) })
        res.end(new Uint8Array(bytes))
      } else {
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(text)) })
        res.end(text)
      }
    })
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
    expect(await get(agent, port, "/text")).toEqual({ status: 200, body: text })
    expect(await get(agent, port, "/bytes")).toEqual({ status: 200, body: text })
    await get(agent, port, "/parts").catch(() => undefined)
    agent.destroy()
    await close(server)
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(["ERR_HTTP_CONTENT_LENGTH_MISMATCH"])
  })
})
