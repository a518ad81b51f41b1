/**
 * Real upstreams for the reliability tests: the workspace server (WorkspaceApi over the
 * embedded store) on a loopback port, behind a small HTTP fault proxy that can delay,
 * stall or lose the answer of each request; and a gateway on the real HTTP stack whose
 * WorkspaceClient is the HTTP client pointed at that proxy (or at a port that refuses).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as HttpServer from "effect/http/HttpServer"
import { createServer, request as httpRequest, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { GatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { TenantConfig, type TenantConfigShape } from "../../src/config/TenantConfig.js"
import { WorkspaceApiLive } from "../../src/workspace/server/server.js"
import { HttpWorkspaceClientLive, type HttpWorkspaceClientOptions } from "../../src/workspace/http/client.js"
import { defaultConfig, exampleFixture } from "../support/gateway.js"
import { testStore, type TestWorkspace } from "../support/storeWorkspace.js"
import { portOf } from "../fixtures/http.js"

/** One request the proxy saw. */
export interface Hit {
  readonly method: string
  readonly url: string
  readonly key: string | undefined
}

/**
 * What the proxy does with a request:
 * - `pass`: forwards it and its answer;
 * - `delay`: forwards it at once (the upstream acts on it), answers `ms` after it arrived;
 * - `stall`: reads it and never answers (a hung upstream; the upstream never sees it);
 * - `loseAnswer`: forwards it (the upstream acts on it) and never answers (a lost answer).
 */
export type Action =
  | { readonly kind: "pass" }
  | { readonly kind: "delay"; readonly ms: number }
  | { readonly kind: "stall" }
  | { readonly kind: "loseAnswer" }

export interface HttpFaults {
  readonly url: string
  readonly hits: Array<Hit>
  /** Decides per request (`n`: its index among all hits). */
  rule: (hit: Hit, n: number) => Action
}

/** The HTTP fault proxy in front of `target`, on a free loopback port, for the scope's lifetime. */
export const httpFaults = (target: string) =>
  Effect.acquireRelease(
    Effect.callback<HttpFaults & { readonly server: Server }>((resume) => {
      const state: HttpFaults & { server?: Server } = { url: "", hits: [], rule: () => ({ kind: "pass" }) }
      const server = createServer((req, res) => {
        const hit: Hit = { method: req.method!, url: req.url!, key: req.headers["idempotency-key"] as string | undefined }
        state.hits.push(hit)
        const action = state.rule(hit, state.hits.length - 1)
        if (action.kind === "stall") return void req.resume()
        const arrived = Date.now()
        const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          const chunks: Array<Buffer> = []
          answer.on("data", (c: Buffer) => chunks.push(c))
          answer.on("end", () => {
            if (action.kind === "loseAnswer") return
            const send = () => {
              if (res.destroyed) return
              res.writeHead(answer.statusCode ?? 502, answer.headers)
              res.end(Buffer.concat(chunks))
            }
            const wait = action.kind === "delay" ? action.ms - (Date.now() - arrived) : 0
            if (wait > 0) setTimeout(send, wait)
            else send()
          })
        })
        upstream.on("error", () => res.destroy())
        req.pipe(upstream)
      })
      server.listen(0, "127.0.0.1", () => {
        state.server = server
        ;(state as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
        resume(Effect.succeed(state as HttpFaults & { readonly server: Server }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

/** An address where nothing listens (a stopped workspace): connections are refused. */
export const refusingUrl = Effect.callback<string>((resume) => {
  const server = createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(`http://127.0.0.1:${port}`)))
  })
})

/** The workspace server over a fresh store (the example fixture), on a loopback port. */
export const workspaceUpstream = Effect.gen(function*() {
  const memory = yield* testStore(exampleFixture)
  const context = yield* Layer.build(
    WorkspaceApiLive(memory).pipe(
      Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(64 * 1024 * 1024), { port: 0, host: "127.0.0.1" }))
    )
  )
  const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
  return { memory, url: `http://127.0.0.1:${portOf(address)}` }
})

export interface UpstreamSetup {
  readonly memory: TestWorkspace
  readonly faults: HttpFaults
}

/**
 * A gateway (real HTTP stack, the HttpClient in context points at it) whose workspace is
 * `workspaceUrl` over HTTP, with `config` and client options as given.
 */
export const gatewayOver = (
  workspaceUrl: string,
  config: Partial<TenantConfigShape>,
  client: Omit<HttpWorkspaceClientOptions, "timeoutMs" | "retries">
) => {
  const settings = { ...defaultConfig, ...config }
  return GatewayLive.pipe(
    Layer.provide(
      HttpWorkspaceClientLive(workspaceUrl, {
        timeoutMs: settings.workspaceTimeoutMs,
        retries: settings.workspaceRetries,
        ...client
      })
    ),
    Layer.provide(FileFetcher.layer([inlineBase64])),
    Layer.provide(TenantConfig.make(settings)),
    Layer.provideMerge(
      HttpServer.layerTestClient.pipe(
        Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: false })),
        Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(settings.maxBodyBytes), { port: 0, host: "127.0.0.1" }))
      )
    ),
    // The client logs every failed attempt as a warning; these tests cause them on purpose.
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  )
}

/** Milliseconds `effect` took, with its result. */
export const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.zip(Effect.sync(() => performance.now()), effect), ([start, a]) => ({
    ms: performance.now() - start,
    value: a
  }))
