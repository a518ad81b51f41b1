/**
 * The floor of S1 inside Effect's HTTP server on @effect/platform-node, as a minimal reproduction for upstream: a
 * constant 200 `{"status":"ok"}` served by `HttpServer.serve` on `NodeHttpServer` (no router,
 * no HttpApi, no schema, tracer off), next to the same answer from node:http. Whatever the
 * gateway does on top, it cannot be cheaper per request than the Effect variant.
 *
 *   PORT=3001 VARIANT=effect node --cpu-prof --import tsx bench/experiments/s1-floor.ts
 *   PORT=3002 VARIANT=raw    node --import tsx bench/experiments/s1-floor.ts
 *   PORT=3003 VARIANT=lean   node --import tsx bench/experiments/s1-floor.ts   (s1-lean-adapter.ts)
 *   npx autocannon -c 10 -d 10 http://127.0.0.1:3001/v1/health   (and :3002)
 *
 * bench/experiments/compare.ts s1-floor measures both against the gateway, interleaved.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { createServer } from "node:http"
import * as EffectServer from "./s1-lean-adapter.js"

const port = Number(process.env.PORT ?? 3000)
const body = JSON.stringify({ status: "ok" })

if (process.env.VARIANT === "raw") {
  createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  }).listen(port, "127.0.0.1")
} else {
  const ok = HttpServerResponse.text(body, { contentType: "application/json" })
  HttpServer.serve(Effect.succeed(ok)).pipe(
    Layer.provide(Layer.succeed(References.TracerEnabled, false)),
    // VARIANT=lean: the gateway's own adapter (s1-lean-adapter.ts) instead of platform-node's.
    Layer.provide(
      process.env.VARIANT === "lean"
        ? EffectServer.layer(createServer, { port, host: "127.0.0.1" })
        : NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })
    ),
    Layer.launch,
    NodeRuntime.runMain
  )
}
