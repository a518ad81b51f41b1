/**
 * A gateway on the real HTTP stack (NodeHttpServer.layerTest) over the embedded store on a
 * temp-file copy of the fixture (./storeWorkspace.ts), with the typed client and a raw request
 * helper for status and body checks.
 */
import { expect } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as Layer from "effect/Layer"
import * as NetAddress from "effect/net/NetAddress"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { GatewayApi } from "../../src/api/Api.js"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { GatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { FileFetcher, type FileProvider } from "../../src/files/FileFetcher.js"
import { TenantConfig, type TenantConfigShape } from "../../src/config/TenantConfig.js"
import { type Fixture, parseFixture } from "../../src/domain/fixture.js"
import { storeLayer, TestStore, type TestWorkspace } from "./storeWorkspace.js"

const exampleJson = JSON.parse(readFileSync(new URL("../fixtures/example.json", import.meta.url), "utf8")) as unknown
export const exampleFixture: Fixture = Effect.runSync(parseFixture("example.json", exampleJson))

export const defaultConfig: TenantConfigShape = {
  tenantSlug: Option.some("acme"),
  eventsKey: Option.none(),
  host: "127.0.0.1",
  port: 0,
  maxBodyBytes: 1024 * 1024,
  maxJsonDepth: 64,
  maxJsonItems: 1_000_000,
  nextStepConcurrency: 4,
  runbookConcurrency: 4,
  tracing: false,
  workspaceUrl: Option.none(),
  workspaceTimeoutMs: 1000,
  workspaceRetries: 0,
  workspaceMaxConnections: 192,
  requestDeadlineMs: 15_000
}

/** NodeHttpServer.layerTest, on the gateway's own Node server, with a node:http client. */
const testServer = (maxBodyBytes: number) =>
  HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: false })),
    Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(maxBodyBytes), { port: 0, host: "127.0.0.1" }))
  )

export interface GatewayOptions {
  readonly config?: Partial<TenantConfigShape>
  readonly fixture?: Fixture
  readonly providers?: ReadonlyArray<FileProvider>
}

/** The gateway's layer, with the test server's client and TestStore (the workspace it runs on). */
export const makeGateway = (options: GatewayOptions = {}) => {
  const layer = GatewayLive.pipe(
    Layer.provideMerge(storeLayer(options.fixture ?? exampleFixture)),
    Layer.provide(FileFetcher.layer(options.providers ?? [inlineBase64])),
    Layer.provide(TenantConfig.make({ ...defaultConfig, ...options.config })),
    Layer.provideMerge(testServer(options.config?.maxBodyBytes ?? defaultConfig.maxBodyBytes))
  )
  return { layer }
}

/** Runs a test body against a fresh gateway and world. */
export const withGateway = <A, E>(
  body: (workspace: TestWorkspace) => Effect.Effect<A, E, HttpClient.HttpClient | HttpServer.HttpServer>,
  options: GatewayOptions = {}
) => Effect.provide(Effect.flatMap(Effect.service(TestStore), body), makeGateway(options).layer)

export const client = HttpApiClient.make(GatewayApi)

/** The test server's port (a TCP listener on 127.0.0.1). */
export const serverPort: Effect.Effect<number, never, HttpServer.HttpServer> = Effect.map(HttpServer.HttpServer, (server) => {
  if (!NetAddress.isInetAddress(server.address)) throw new Error(`expected a TCP address, got ${server.address._tag}`)
  return server.address.port
})

export interface RawResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: any
  readonly text: string
  readonly bytes: Buffer
}

/** A raw request: JSON bodies as objects, or a string sent as-is. */
export const raw = (
  method: "GET" | "POST" | "PATCH" | "DELETE" | "PUT",
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(path).pipe(HttpClientRequest.setHeaders(headers))
    if (typeof body === "string") req = HttpClientRequest.bodyText(req, body, headers["content-type"] ?? "application/json")
    else if (body !== undefined) req = HttpClientRequest.bodyJsonUnsafe(req, body)
    const res = yield* http.execute(req)
    const bytes = Buffer.from(yield* res.arrayBuffer)
    const text = bytes.toString("utf8")
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed as any, text, bytes } satisfies RawResponse
  }).pipe(Effect.orDie)

/** Asserts the spec's error body: exactly statusCode, message, error (plus named extras). */
export const expectError = (
  res: RawResponse,
  status: number,
  name: string,
  messageIncludes?: string | RegExp,
  extra: Record<string, unknown> = {}
) => {
  expect(res.status).toBe(status)
  expect(res.headers["content-type"]).toMatch(/application\/json/)
  expect(res.body).toEqual({ statusCode: status, error: name, message: expect.any(String), ...extra })
  if (typeof messageIncludes === "string") expect(res.body.message).toContain(messageIncludes)
  else if (messageIncludes !== undefined) expect(res.body.message).toMatch(messageIncludes)
}
