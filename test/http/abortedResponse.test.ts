/**
 * An answer produced after its client left. The platform's response writer
 * waits, uninterruptibly, for the callback of Node's `res.end`, which Node calls on 'finish' only:
 * on a closed connection it never came, so the request's fiber and its scope stayed open for
 * good. The gateway's Node server (src/http/server/nodeServer.ts) settles that callback on 'close'.
 * Checked by the request scope's finalizer: it runs only once the answer is written.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type * as http from "node:http"
import * as net from "node:net"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { serverPort } from "./support.js"

const ServerLive = NodeHttpServer.layer(() => createGatewayServer(1024 * 1024), { port: 0, host: "127.0.0.1" })

/**
 * Serves an app that answers `respond` only once its client has gone, and sends it `request`
 * from a client that leaves at once; succeeds when the request's scope has closed.
 */
const answerAfterClientLeft = (requestText: string, respond: HttpServerResponse.HttpServerResponse) =>
  Effect.gen(function*() {
    const scopeClosed = yield* Deferred.make<void>()
    yield* HttpServer.serveEffect(Effect.gen(function*() {
      yield* Effect.addFinalizer(() => Deferred.succeed(scopeClosed, undefined))
      const request = yield* HttpServerRequest.HttpServerRequest
      const res = NodeHttpServerRequest.toServerResponse(request) as http.ServerResponse
      if (!res.destroyed) yield* Effect.callback<void>((resume) => void res.once("close", () => resume(Effect.void)))
      return respond
    }))
    const port = yield* serverPort
    const socket = net.connect(port, "127.0.0.1", () => {
      socket.write(requestText, () => setTimeout(() => socket.destroy(), 20))
    })
    socket.on("error", () => {})
    return yield* Deferred.await(scopeClosed).pipe(
      Effect.timeoutOrElse({ duration: "3 seconds", orElse: () => Effect.fail(new Error("the request's scope never closed")) })
    )
  }).pipe(Effect.provide(ServerLive))

describe("an answer to a client that has left", () => {
  it.effect("with a body: the request's fiber ends", () =>
    Effect.map(
      answerAfterClientLeft("GET /x HTTP/1.1\r\nhost: x\r\n\r\n", HttpServerResponse.jsonUnsafe({ ok: true })),
      (done) => expect(done).toBeUndefined()
    ))

  it.effect("to a HEAD request: the request's fiber ends", () =>
    Effect.map(
      answerAfterClientLeft("HEAD /x HTTP/1.1\r\nhost: x\r\n\r\n", HttpServerResponse.empty({ status: 204 })),
      (done) => expect(done).toBeUndefined()
    ))
})
