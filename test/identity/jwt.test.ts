/**
 * SVC_JWT_JWKS on the built process (`npm start`): bearer tokens verified against a key set
 * from a file and from a URL (a local JWKS server that counts its fetches: keys are cached,
 * fetched again once on a rotation, and not per request).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { http, type JsonResponse, type RunningService, startBuilt } from "../support/process.js"
import { AUDIENCE, ISSUER, jwksOf, makeKey, sign, type SigningKey } from "./support.js"

const dir = mkdtempSync(join(tmpdir(), "identity-jwt-"))
const databaseUrl = () => pathToFileURL(join(mkdtempSync(join(dir, "db-")), "workspace.db")).href

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

const get = (service: RunningService, path: string, token?: string, headers: Record<string, string> = {}) =>
  http("GET", `${service.url}${path}`, undefined, { ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}), ...headers })

/** A 401 for a token that was sent but is not valid: RFC 6750's invalid_token, in the error shape. */
const expectInvalidToken = (res: JsonResponse, why: RegExp) => {
  expect(res.status).toBe(401)
  expect(res.body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.stringMatching(why) })
  expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="tenant-gateway", error="invalid_token", error_description="[^"]+"$/)
}

const JWT_ENV = {
  SVC_JWT_ISSUER: ISSUER,
  SVC_JWT_AUDIENCE: `other-api, ${AUDIENCE}`,
  SVC_JWT_TENANT_CLAIM: "tenant",
  SVC_TENANT_SLUG: "acme"
}

afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("JWT from a JWKS file", () => {
  let service: RunningService
  let key: SigningKey
  let other: SigningKey
  beforeAll(async () => {
    key = await makeKey()
    other = await makeKey(undefined, "RS256")
    const file = join(dir, "jwks.json")
    writeFileSync(file, JSON.stringify(jwksOf(key, other)))
    service = await startBuilt({
      SVC_DATABASE_URL: databaseUrl(),
      SVC_JWT_JWKS: file,
      ...JWT_ENV,
      SVC_ACTOR_HEADER: "x-forwarded-email",
      SVC_JWT_MAX_AGE: "3600"
    })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
  })

  const valid = (claims: Record<string, unknown> = {}) => sign(key, { claims: { tenant: "acme", ...claims } })

  it("health answers without a token; the API needs one: 401 with a bare Bearer challenge", async () => {
    expect((await get(service, "/v1/health")).status).toBe(200)
    for (const res of [await get(service, "/v1/entities"), await get(service, "/v1/entities", undefined, { authorization: "Basic YTpi" })]) {
      expect(res.status).toBe(401)
      expect(res.body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.stringContaining("bearer token") })
      expect(res.headers.get("www-authenticate")).toBe("Bearer realm=\"tenant-gateway\"")
    }
    // Writes and unknown /v1 paths too; the edge's actor header is no way around it.
    const write = await http("POST", `${service.url}/v1/gl/connect/session`, {}, { "x-forwarded-email": "jane@example.com" })
    expect(write.status).toBe(401)
    expect((await get(service, "/v1/nothing-here")).status).toBe(401)
  })

  it("a valid token (either key, any accepted audience) is let through", async () => {
    expect((await get(service, "/v1/entities", await valid())).status).toBe(200)
    expect((await get(service, "/v1/entities", await sign(other, { claims: { tenant: "acme" } }))).status).toBe(200)
    const write = await http("POST", `${service.url}/v1/gl/connect/session`, {}, { authorization: `Bearer ${await valid()}` })
    expect(write.status).toBeLessThan(300)
  })

  it("a token minted for longer than SVC_JWT_MAX_AGE (exp - iat), or issued in the future: 401 invalid_token", async () => {
    const claims = { tenant: "acme" }
    // Within the bound (an hour here): let through.
    expect((await get(service, "/v1/entities", await sign(key, { claims, expiresIn: 3500 }))).status).toBe(200)
    expect((await get(service, "/v1/entities", await sign(key, { claims, expiresIn: 3500, issuedAt: null }))).status).toBe(200)
    // A year-long token, still valid by its exp: refused, with or without iat.
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { claims, expiresIn: 365 * 86_400 })), /longer than the 3600 s accepted \(SVC_JWT_MAX_AGE\)/)
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { claims, expiresIn: 7200, issuedAt: null })), /SVC_JWT_MAX_AGE/)
    // An iat set ahead to make a long token look short: refused.
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { claims, expiresIn: 86_400, issuedAt: 86_000 })), /"iat" claim lies in the future/)
  })

  it("expired, wrong issuer, wrong audience, no expiry: 401 invalid_token", async () => {
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { expiresIn: -3600, claims: { tenant: "acme" } })), /expired/)
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { issuer: "https://evil.test/", claims: { tenant: "acme" } })), /"iss"/)
    expectInvalidToken(await get(service, "/v1/entities", await sign(key, { audience: "someone-else", claims: { tenant: "acme" } })), /"aud"/)
    const { SignJWT } = await import("jose")
    const noExp = await new SignJWT({ sub: "jane", tenant: "acme" }).setProtectedHeader({ alg: "ES256", kid: key.kid })
      .setIssuer(ISSUER).setAudience(AUDIENCE).sign(key.privateKey)
    expectInvalidToken(await get(service, "/v1/entities", noExp), /"exp"/)
  })

  it("a bad signature, alg none, an HMAC token, garbage: 401 invalid_token", async () => {
    // Signed by a key the set does not hold, under the kid of one it does.
    const stranger = await makeKey(key.kid)
    expectInvalidToken(await get(service, "/v1/entities", await sign(stranger, { claims: { tenant: "acme" } })), /signature/)
    // The payload of a valid token with another's signature.
    const [h, , s] = (await valid()).split(".")
    const forgedPayload = base64url({ sub: "ceo", tenant: "acme", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 })
    expectInvalidToken(await get(service, "/v1/entities", `${h}.${forgedPayload}.${s}`), /signature/)
    // alg none (an unsecured JWT), with and without a kid.
    for (const header of [{ alg: "none" }, { alg: "none", kid: key.kid }]) {
      const none = `${base64url(header)}.${forgedPayload}.`
      expectInvalidToken(await get(service, "/v1/entities", none), /./)
    }
    // HS256 keyed with the public key's text (the classic confusion).
    const { SignJWT } = await import("jose")
    const hmac = await new SignJWT({ sub: "x", tenant: "acme" }).setProtectedHeader({ alg: "HS256", kid: key.kid })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime("5m")
      .sign(new TextEncoder().encode(JSON.stringify(key.jwk)))
    expectInvalidToken(await get(service, "/v1/entities", hmac), /algorithm/)
    for (const garbage of ["abc", "a.b.c", "x".repeat(9000)]) expectInvalidToken(await get(service, "/v1/entities", garbage), /./)
  })

  it("the actor claim must be a name: missing or not visible text is 401", async () => {
    const { SignJWT } = await import("jose")
    const noSub = await new SignJWT({ tenant: "acme" }).setProtectedHeader({ alg: "ES256", kid: key.kid })
      .setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime("5m").sign(key.privateKey)
    expectInvalidToken(await get(service, "/v1/entities", noSub), /"sub"/)
    expectInvalidToken(await get(service, "/v1/entities", await valid({ sub: "agent:a11a0000-0000-4000-8000-0000000000a1" })), /agent:/)
    expectInvalidToken(await get(service, "/v1/entities", await valid({ sub: "x".repeat(300) })), /at most 256/)
  })

  it("a token of another tenant, or of none, is 403", async () => {
    for (const claims of [{ tenant: "globex" }, { tenant: undefined }, { tenant: ["acme"] }]) {
      const res = await get(service, "/v1/entities", await valid(claims))
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ statusCode: 403, error: "Forbidden", message: expect.stringContaining("tenant") })
    }
  })

  it("leaves /mcp to agent keys, and the docs, the console and the probes open", async () => {
    const mcp = await http("POST", `${service.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { authorization: `Bearer ${await valid()}` })
    expect(mcp.status).toBe(401)
    expect(mcp.headers.get("www-authenticate")).toContain("realm=\"mcp\"")
    for (const path of ["/openapi.json", "/", "/readyz"]) expect((await fetch(`${service.url}${path}`)).status).toBe(200)
  })
})

describe("JWT from a JWKS URL", () => {
  let service: RunningService
  let jwksServer: Server
  let fetches = 0
  let failing = false
  let keys: Array<SigningKey> = []
  let first: SigningKey
  beforeAll(async () => {
    first = await makeKey()
    keys = [first]
    jwksServer = createServer((_req, res) => {
      fetches++
      if (failing) {
        res.writeHead(500).end()
        return
      }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(jwksOf(...keys)))
    })
    await new Promise<void>((resolve) => jwksServer.listen(0, "127.0.0.1", resolve))
    const { port } = jwksServer.address() as { port: number }
    service = await startBuilt({
      SVC_DATABASE_URL: databaseUrl(),
      SVC_JWT_JWKS: `http://127.0.0.1:${port}/.well-known/jwks.json`,
      SVC_JWT_JWKS_COOLDOWN_MS: "1000",
      SVC_JWT_ACTOR_CLAIM: "email",
      ...JWT_ENV
    })
  }, 60_000)
  afterAll(async () => {
    await service?.stop()
    await new Promise((resolve) => jwksServer?.close(resolve))
  })

  const token = (key: SigningKey, kid?: string) =>
    sign(key, { claims: { tenant: "acme", email: "jane@example.com" }, ...(kid !== undefined ? { kid } : {}) })

  it("an unreachable key set is 503 with Retry-After, not a 401 and not a fetch per request", async () => {
    failing = true
    const t = await token(first)
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(service, "/v1/entities", t)))
    for (const res of answers) {
      expect(res.status).toBe(503)
      expect(res.headers.get("retry-after")).toBe("1")
      expect(res.body).toEqual({ statusCode: 503, error: "Service Unavailable", message: expect.stringContaining("keys") })
    }
    expect(fetches).toBeLessThanOrEqual(2)
    expect((await get(service, "/v1/health")).status).toBe(200)
    failing = false
    fetches = 0
    // After the back-off (1 s here: the cooldown), the set is fetched again.
    await new Promise((r) => setTimeout(r, 1500))
  })

  it("fetches the key set once for many requests", async () => {
    const t = await token(first)
    const answers = await Promise.all(Array.from({ length: 20 }, () => get(service, "/v1/entities", t)))
    for (const res of answers) expect(res.status).toBe(200)
    for (let i = 0; i < 10; i++) expect((await get(service, "/v1/entities", await token(first))).status).toBe(200)
    expect(fetches).toBe(1)
  })

  it("a token signed by a new key (rotation) makes one fetch; made-up key ids make no flood of fetches", async () => {
    const second = await makeKey()
    keys = [first, second]
    await new Promise((r) => setTimeout(r, 1200)) // past the cooldown of the first fetch
    const t = await token(second)
    const answers = await Promise.all(Array.from({ length: 10 }, () => get(service, "/v1/entities", t)))
    for (const res of answers) expect(res.status).toBe(200)
    expect(fetches).toBe(2)
    // Right after a fetch, unknown key ids are refused without fetching again (cooldown).
    const bogus = await Promise.all(Array.from({ length: 20 }, async () => get(service, "/v1/entities", await token(second, randomUUID()))))
    for (const res of bogus) expectInvalidToken(res, /no key/)
    expect(fetches).toBeLessThanOrEqual(3)
    // The old key still verifies, without a fetch.
    const before = fetches
    expect((await get(service, "/v1/entities", await token(first))).status).toBe(200)
    expect(fetches).toBe(before)
  })
})
