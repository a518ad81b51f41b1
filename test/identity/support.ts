/**
 * What the identity tests share: a WorkspaceClient that records who was acting (the
 * `currentActor` reference) when each of its methods ran, a gateway over it on the real HTTP
 * stack (in process), and signing keys with a JWKS for them (jose).
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServer from "effect/http/HttpServer"
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { randomUUID } from "node:crypto"
import { inlineBase64 } from "../../src/files/providers/inlineBase64.js"
import { GatewayLive } from "../../src/gateway/Gateway.js"
import { createGatewayServer } from "../../src/http/server/nodeServer.js"
import { actorNow } from "../../src/services/Actor.js"
import { FileFetcher } from "../../src/files/FileFetcher.js"
import { IdentityConfig, type IdentitySettings } from "../../src/config/IdentityConfig.js"
import { TenantConfig } from "../../src/config/TenantConfig.js"
import { WorkspaceClient, type WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import type { Fixture } from "../../src/domain/fixture.js"
import { defaultConfig, exampleFixture } from "../support/gateway.js"
import { storeLayer } from "../support/storeWorkspace.js"

export interface ActorCall {
  readonly method: string
  readonly actor: string | undefined
}

/** `service` with every Effect-returning method recording the actor it ran for into `calls`. */
export const recording = (service: WorkspaceClientService, calls: Array<ActorCall>): WorkspaceClientService =>
  new Proxy(service, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver)
      if (typeof value !== "function") return value
      return (...args: Array<unknown>) => {
        const result = value.apply(target, args)
        return Effect.isEffect(result)
          ? Effect.andThen(Effect.map(actorNow, (actor) => void calls.push({ method: String(key), actor })), result)
          : result
      }
    }
  })

/** `WorkspaceClient` in `layer`, recording into `calls`. */
export const recordingLayer = (layer: Layer.Layer<WorkspaceClient>, calls: Array<ActorCall>): Layer.Layer<WorkspaceClient> =>
  Layer.effect(WorkspaceClient, Effect.map(Effect.service(WorkspaceClient), (service) => recording(service, calls))).pipe(Layer.provide(layer))

/** The gateway (in process, real HTTP stack) over the recording embedded store, with `identity`. */
export const recordingGateway = (identity: IdentitySettings, fixture: Fixture = exampleFixture) => {
  const calls: Array<ActorCall> = []
  const workspace = recordingLayer(storeLayer(fixture), calls)
  const server = HttpServer.layerTestClient.pipe(
    Layer.provide(NodeHttpClient.layerNodeHttpOptions({ keepAlive: false })),
    Layer.provideMerge(NodeHttpServer.layer(() => createGatewayServer(defaultConfig.maxBodyBytes), { port: 0, host: "127.0.0.1" }))
  )
  const layer = GatewayLive.pipe(
    Layer.provide(workspace),
    Layer.provide(FileFetcher.layer([inlineBase64])),
    Layer.provide(IdentityConfig.make(identity)),
    Layer.provide(TenantConfig.make(defaultConfig)),
    Layer.provideMerge(server)
  )
  return { calls, layer }
}

export interface SigningKey {
  readonly kid: string
  readonly privateKey: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"]
  readonly jwk: JWK
}

export const makeKey = async (kid: string = randomUUID(), alg: "RS256" | "ES256" = "ES256"): Promise<SigningKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } }
}

export const jwksOf = (...keys: ReadonlyArray<SigningKey>) => ({ keys: keys.map((k) => k.jwk) })

export const ISSUER = "https://idp.example.test/"
export const AUDIENCE = "tenant-gateway"

export interface TokenOptions {
  readonly claims?: Record<string, unknown>
  readonly issuer?: string
  readonly audience?: string
  /** Seconds from now; negative for an expired token. */
  readonly expiresIn?: number
  /** `iat` in seconds from now (default -5); null: no `iat` claim. */
  readonly issuedAt?: number | null
  readonly kid?: string
}

export const sign = (key: SigningKey, options: TokenOptions = {}) => {
  const now = Math.floor(Date.now() / 1000)
  const jwt = new SignJWT({ sub: "jane@example.com", ...options.claims })
    .setProtectedHeader({ alg: key.jwk.alg as string, kid: options.kid ?? key.kid })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setExpirationTime(now + (options.expiresIn ?? 300))
  if (options.issuedAt !== null) jwt.setIssuedAt(now + (options.issuedAt ?? -5))
  return jwt.sign(key.privateKey)
}
