/**
 * The floor of S2 inside Effect's HTTP server: `GET /v1/entities/:id/tasks` served by
 * `HttpRouter` on `NodeHttpServer` (no HttpApi, no schema, no middleware, tracer off), each list
 * one board call to the workspace service (BENCH_UPSTREAM_URL) made as the peers make it
 * (bench/peers/common.ts: node:http on a keep-alive agent, JSON.parse, the summaries mapped).
 * Whatever the gateway does on top, its list cannot cost less than this.
 *
 *   VARIANT=effect         the peers' call, awaited by the handler (Effect.promise)
 *   VARIANT=effect-client  the call through Effect's HttpClient on NodeHttpClient (keep-alive agent)
 *
 * Started by bench/experiments/s2-floor.ts beside the gateway and the peers.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import { createServer } from "node:http"
import { type BoardTask, listTasks, port, summariesOf } from "../peers/common.js"

const upstream = process.env.BENCH_UPSTREAM_URL!
const tenantId = process.env.BENCH_TENANT_ID!

const json = (status: number, value: unknown) =>
  HttpServerResponse.text(JSON.stringify(value), { status, contentType: "application/json" })

const viaPeerCall = (id: string) =>
  Effect.map(Effect.promise(() => listTasks(id)), (list) => list === undefined ? json(404, { message: "not found" }) : json(200, list))

const viaHttpClient = (id: string) =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    client.get(`${upstream}/workspace/tenants/${tenantId}/entities/${encodeURIComponent(id)}/board`).pipe(
      Effect.flatMap((res) => res.status === 404 ? Effect.succeed(undefined) : res.json),
      Effect.map((board) => board === undefined ? json(404, { message: "not found" }) : json(200, summariesOf(board as unknown as ReadonlyArray<BoardTask>))),
      Effect.orDie
    ))

const list = HttpRouter.add(
  "GET",
  "/v1/entities/:id/tasks",
  Effect.flatMap(HttpRouter.params, (params) =>
    process.env.VARIANT === "effect-client" ? viaHttpClient(params.id!) : viaPeerCall(params.id!))
)
const health = HttpRouter.add("GET", "/v1/health", Effect.succeed(json(200, { status: "ok" })))

HttpRouter.serve(Layer.mergeAll(list, health), { disableLogger: true, disableListenLog: true }).pipe(
  Layer.provide(Layer.succeed(References.TracerEnabled, false)),
  Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
  Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: true })),
  Layer.launch,
  NodeRuntime.runMain
)
