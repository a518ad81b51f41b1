/**
 * Who acts, seen from inside: the `currentActor` reference holds the actor the edge named while
 * the gateway's handlers call the workspace (header mode, JWT mode, agents at /mcp), and it
 * crosses to an HTTP workspace as `x-svc-actor` and back into that server's handlers.
 * The answers themselves (401, 403, 400) are tested on the built process (header.test.ts, jwt.test.ts).
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServer from "effect/http/HttpServer"
import { createServer } from "node:http"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ACTOR_FORWARD_HEADER, withActor } from "../../src/services/Actor.js"
import { IDENTITY_OFF, type IdentitySettings } from "../../src/config/IdentityConfig.js"
import { WorkspaceApiLive } from "../../src/workspace/server/server.js"
import { makeHttpWorkspaceClient } from "../../src/workspace/http/client.js"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { exampleFixture, raw } from "../support/gateway.js"
import { testStore } from "../support/storeWorkspace.js"
import { ACME } from "../support/world.js"
import { portOf } from "../fixtures/http.js"
import { type ActorCall, AUDIENCE, ISSUER, jwksOf, makeKey, recording, recordingGateway, sign } from "./support.js"

const HEADER: IdentitySettings = { header: { name: "x-forwarded-email", required: true }, jwt: undefined }

const actorsOf = (calls: ReadonlyArray<ActorCall>, method: string) => calls.filter((c) => c.method === method).map((c) => c.actor)

describe("the actor inside a request", () => {
  it.effect("header mode: the workspace calls of a request run for the header's actor", () => {
    const { calls, layer } = recordingGateway(HEADER)
    return Effect.gen(function*() {
      const res = yield* raw("GET", "/v1/entities", undefined, { "x-forwarded-email": "jane@example.com" })
      expect(res.status).toBe(200)
      expect(actorsOf(calls, "listEntities")).toEqual(["jane@example.com"])
      // UTF-8 from the proxy (sent as bytes; Node hands them over as latin1) is read as UTF-8.
      const utf8 = Buffer.from("José Núñez", "utf8").toString("latin1")
      expect((yield* raw("GET", "/v1/entities", undefined, { "x-forwarded-email": utf8 })).status).toBe(200)
      expect(actorsOf(calls, "listEntities")[1]).toBe("José Núñez")
      // A read without the header runs unnamed; nothing leaks from the request before.
      expect((yield* raw("GET", "/v1/entities")).status).toBe(200)
      expect(actorsOf(calls, "listEntities")[2]).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })

  it.effect("off (the default): no one is named, whatever headers arrive", () => {
    const { calls, layer } = recordingGateway(IDENTITY_OFF)
    return Effect.gen(function*() {
      const res = yield* raw("GET", "/v1/entities", undefined, { "x-forwarded-email": "jane@example.com", "x-svc-actor": "mallory" })
      expect(res.status).toBe(200)
      expect(actorsOf(calls, "listEntities")).toEqual([undefined])
    }).pipe(Effect.provide(layer))
  })

  it.effect("JWT mode: the actor is the token's claim, and the header is not read", () =>
    Effect.gen(function*() {
      const key = yield* Effect.promise(() => makeKey())
      const dir = mkdtempSync(join(tmpdir(), "identity-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const file = join(dir, "jwks.json")
      writeFileSync(file, JSON.stringify(jwksOf(key)))
      const { calls, layer } = recordingGateway({
        header: HEADER.header,
        jwt: {
          jwks: { _tag: "File", path: file },
          issuer: ISSUER,
          audience: [AUDIENCE],
          actorClaim: "email",
          tenantClaim: "tenant",
          fetchTimeoutMs: 1000,
          cooldownMs: 0,
          maxAgeSeconds: 3600
        }
      })
      const token = yield* Effect.promise(() => sign(key, { claims: { email: "ceo@acme.test", tenant: "acme" } }))
      yield* Effect.gen(function*() {
        const res = yield* raw("GET", "/v1/entities", undefined, { authorization: `Bearer ${token}`, "x-forwarded-email": "mallory@x" })
        expect(res.status).toBe(200)
        expect(actorsOf(calls, "listEntities")).toEqual(["ceo@acme.test"])
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.scoped))

  it.effect("agents at /mcp act as agent:<uuid>", () => {
    const agentId = "a11a0000-0000-4000-8000-0000000000a1"
    const key = "ak_test_agent_a_0123456789abcdefghijklmnop"
    const fixture = { ...exampleFixture, agents: [{ id: agentId, tenantId: ACME, kind: "claude", externalRef: "a", name: "Agent A", apiKey: key }] }
    const { calls, layer } = recordingGateway(HEADER, fixture as typeof exampleFixture)
    return Effect.gen(function*() {
      const res = yield* raw("POST", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_entities", arguments: {} } }, {
        authorization: `Bearer ${key}`,
        accept: "application/json, text/event-stream",
        // An edge's header on /mcp does not name the agent's calls.
        "x-forwarded-email": "jane@example.com"
      })
      expect(res.status).toBe(200)
      expect(res.body.result.isError).not.toBe(true)
      expect(actorsOf(calls, "listEntities")).toEqual([`agent:${agentId}`])
    }).pipe(Effect.provide(layer))
  })
})

describe("the actor across an HTTP workspace (x-svc-actor)", () => {
  it.effect("the HTTP client sends the actor; the workspace server's handlers run for it", () =>
    Effect.gen(function*() {
      const calls: Array<ActorCall> = []
      const context = yield* Layer.build(
        WorkspaceApiLive(recording(yield* testStore(exampleFixture), calls)).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
        )
      )
      const server = yield* Effect.provide(HttpServer.HttpServer, context)
      const client = yield* makeHttpWorkspaceClient(`http://127.0.0.1:${portOf(server.address)}`, { timeoutMs: 2000, retries: 0 }).pipe(
        Effect.provide(NodeHttpClient.layerNodeHttp)
      )
      yield* client.listEntities(ACME)
      yield* withActor("José <jose@acme.test> 100%")(client.listEntities(ACME))
      yield* withActor("agent:a11a0000-0000-4000-8000-0000000000a1")(client.listEntities(ACME))
      expect(actorsOf(calls, "listEntities")).toEqual([undefined, "José <jose@acme.test> 100%", "agent:a11a0000-0000-4000-8000-0000000000a1"])
    }).pipe(Effect.scoped))

  it.effect("a malformed x-svc-actor answers 400 naming the header", () =>
    Effect.gen(function*() {
      const calls: Array<ActorCall> = []
      const context = yield* Layer.build(
        WorkspaceApiLive(recording(yield* testStore(exampleFixture), calls)).pipe(Layer.provideMerge(NodeHttpServer.layerTest))
      )
      const path = `/workspace/tenants/${ACME}/entities`
      for (const bad of ["%E0%A4%A", "a%00b", "x".repeat(300)]) {
        const res = yield* raw("GET", path, undefined, { [ACTOR_FORWARD_HEADER]: bad }).pipe(Effect.provide(context))
        expect(res.status).toBe(400)
        expect(res.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringContaining(`Header ${ACTOR_FORWARD_HEADER}`) })
      }
      expect(calls).toEqual([])
    }).pipe(Effect.scoped))
})
