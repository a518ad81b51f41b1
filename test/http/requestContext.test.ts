/**
 * A request fiber starts from Effect's entries of the server's context, not from every service the
 * process was built with (src/gateway/Gateway.ts, `requestContextLean`): HttpApiBuilder copies a
 * request's whole context once per request, so each entry costs every request. Our services are
 * still there for the API's handlers (their groups captured them when built), which the same
 * requests show.
 */
import { it } from "@effect/vitest"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import { describe, expect } from "vitest"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { TenantConfig } from "../../src/config/TenantConfig.js"
import { gatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { defaultConfig, exampleFixture, raw } from "../support/gateway.js"
import { storeLayer } from "../support/storeWorkspace.js"

/** A route beside the API answering the keys of the context its request fiber runs in. */
const ContextKeys = HttpRouter.add(
  "GET",
  "/context-keys",
  Effect.withFiber((fiber) => Effect.succeed(HttpServerResponse.jsonUnsafe([...fiber.context.mapUnsafe.keys()])))
)

const layer = gatewayLive(ContextKeys).pipe(
  Layer.provideMerge(storeLayer(exampleFixture)),
  Layer.provide(FileFetcher.layer([inlineBase64])),
  Layer.provide(TenantConfig.make(defaultConfig)),
  Layer.provideMerge(
    HttpServer.layerTestClient.pipe(
      Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: false })),
      Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(defaultConfig.maxBodyBytes), { port: 0, host: "127.0.0.1" }))
    )
  )
)

describe("the context a request starts from", () => {
  it.effect("holds Effect's entries and the request's own, none of the process's services", () =>
    Effect.gen(function*() {
      const keys = (yield* raw("GET", "/context-keys")).body as Array<string>
      expect(keys).toContain("effect/http/HttpServerRequest")
      expect(keys).toContain("effect/Scope")
      // The request's own entries (the middleware's) are there; the process's services are not.
      expect(keys).toContain("observability/CurrentRequest")
      const ours = keys.filter((k) => !/^(@|~)?effect\//.test(k))
      expect(ours.sort()).toEqual(["observability/CurrentRequest", "services/currentDeadline"])
      // The handlers still have theirs: the tenant's entities come from the workspace.
      const entities = yield* raw("GET", "/v1/entities")
      expect(entities.status).toBe(200)
      expect(entities.body.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(layer)))
})
