/**
 * Test harness for the HTTP side: the workspace server (WorkspaceApiLive) on a loopback port,
 * and the HTTP WorkspaceClient pointed at it, both over real sockets.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import type * as HttpServer from "effect/http/HttpServer"
import * as Layer from "effect/Layer"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import type { WorkspaceClient, WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import type { WorkspaceExtras } from "../../src/upstream/extras.js"
import { DEFAULT_MAX_BODY_BYTES, WorkspaceApiLive, type WorkspaceServerOptions } from "../../src/workspace/server/server.js"
import { HttpWorkspaceClientLive, type HttpWorkspaceClientOptions } from "../../src/workspace/http/client.js"
import { serverPort } from "../support/gateway.js"

/** The base URL a server in the layer context listens on. */
export const serverUrl = Effect.map(serverPort, (port) => `http://127.0.0.1:${port}`)

/**
 * WorkspaceApi served over `service` on 127.0.0.1, an ephemeral port, on the same Node server
 * `npm run workspace` uses (its limits and error answers); exposes the HttpServer.
 */
export const workspaceServer = (
  service: WorkspaceClientService,
  extras?: WorkspaceExtras,
  options?: WorkspaceServerOptions
): Layer.Layer<HttpServer.HttpServer, unknown> =>
  WorkspaceApiLive(service, extras, options).pipe(
    Layer.provideMerge(NodeHttpServer.layer(
      () => createGatewayServer(options?.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
      { port: 0, host: "127.0.0.1" }
    ))
  )

export const DEFAULT_CLIENT_OPTIONS: HttpWorkspaceClientOptions = { timeoutMs: 10_000, retries: 2, retryBaseMs: 20 }

/** The HTTP WorkspaceClient talking to the server in `server`. */
export const clientOf = (
  server: Layer.Layer<HttpServer.HttpServer, unknown>,
  options: HttpWorkspaceClientOptions = DEFAULT_CLIENT_OPTIONS
): Layer.Layer<WorkspaceClient, unknown> =>
  Layer.unwrap(Effect.map(serverUrl, (url) => HttpWorkspaceClientLive(url, options))).pipe(Layer.provide(server))
