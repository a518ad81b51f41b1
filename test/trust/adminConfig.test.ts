/**
 * The admin listener's settings and bearer check, as units: defaults, refusals naming the
 * variable, loopback detection, the constant-time comparison and the 401 it answers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import {
  adminSettings,
  bearerTokenOf,
  DEFAULT_ADMIN_HOST,
  DEFAULT_ADMIN_PORT,
  isLoopback,
  requireBearer,
  tokenMatcher,
  workspaceToken
} from "../../src/workspace/server/AdminConfig.js"
import { readEnv } from "../fixtures/config.js"

const read = <A>(config: Config.Config<A>, env: Record<string, string>) => readEnv(config, env)

const failure = <A>(config: Config.Config<A>, env: Record<string, string>) => {
  const result = read(config, env)
  if (Result.isSuccess(result)) throw new Error(`expected a failure for ${JSON.stringify(env)}`)
  return String(result.failure)
}

const TOKEN = "s3cret-admin-token-0123456789"

describe("admin settings", () => {
  it("default: 127.0.0.1:3001, no token", () => {
    expect(DEFAULT_ADMIN_HOST).toBe("127.0.0.1")
    expect(DEFAULT_ADMIN_PORT).toBe(3001)
    expect(read(adminSettings, {})).toEqual(Result.succeed({ listen: Option.some({ host: "127.0.0.1", port: 3001 }), token: Option.none() }))
  })

  it("SVC_ADMIN_PORT: a port, 0 (a free port), or off (no listener); anything else names the variable", () => {
    expect(read(adminSettings, { SVC_ADMIN_PORT: "4100" })).toMatchObject(Result.succeed({ listen: Option.some({ port: 4100 }) }))
    expect(read(adminSettings, { SVC_ADMIN_PORT: "0" })).toMatchObject(Result.succeed({ listen: Option.some({ port: 0 }) }))
    expect(read(adminSettings, { SVC_ADMIN_PORT: "OFF" })).toMatchObject(Result.succeed({ listen: Option.none() }))
    for (const bad of ["", "-1", "65536", "3001x", "none", "1e3"]) {
      expect(failure(adminSettings, { SVC_ADMIN_PORT: bad })).toContain(`SVC_ADMIN_PORT must be a port number (0 for a free port) or "off", got "${bad}"`)
    }
  })

  it("SVC_ADMIN_TOKEN: at least 16 visible ASCII characters; empty is refused, not taken as no token", () => {
    const settings = read(adminSettings, { SVC_ADMIN_TOKEN: TOKEN })
    expect(Result.isSuccess(settings) && Option.map(settings.success.token, Redacted.value)).toEqual(Option.some(TOKEN))
    // The token is redacted wherever settings are printed.
    expect(String(Result.getOrThrow(settings).token)).not.toContain(TOKEN)
    expect(failure(adminSettings, { SVC_ADMIN_TOKEN: "" })).toContain("SVC_ADMIN_TOKEN is set but empty")
    expect(failure(adminSettings, { SVC_ADMIN_TOKEN: "tooshort" })).toContain("SVC_ADMIN_TOKEN must be at least 16 characters")
    expect(failure(adminSettings, { SVC_ADMIN_TOKEN: "with a space in it, long enough" })).toContain("SVC_ADMIN_TOKEN must be visible ASCII")
    expect(failure(workspaceToken, { SVC_WORKSPACE_TOKEN: "short" })).toContain("SVC_WORKSPACE_TOKEN must be at least 16")
    expect(read(workspaceToken, {})).toEqual(Result.succeed(Option.none()))
  })

  it("a non-loopback SVC_ADMIN_HOST needs a token; off needs nothing", () => {
    expect(failure(adminSettings, { SVC_ADMIN_HOST: "0.0.0.0" })).toContain("SVC_ADMIN_HOST=0.0.0.0 is not a loopback address")
    expect(failure(adminSettings, { SVC_ADMIN_HOST: "10.1.2.3" })).toContain("set SVC_ADMIN_TOKEN")
    expect(Result.isSuccess(read(adminSettings, { SVC_ADMIN_HOST: "0.0.0.0", SVC_ADMIN_TOKEN: TOKEN }))).toBe(true)
    expect(Result.isSuccess(read(adminSettings, { SVC_ADMIN_HOST: "0.0.0.0", SVC_ADMIN_PORT: "off" }))).toBe(true)
  })

  it("loopback addresses", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost", "LOCALHOST", "::ffff:127.0.0.1"]) expect(isLoopback(h), h).toBe(true)
    for (const h of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.1", "example.com", "128.0.0.1", "::2", "localhost.example.com"]) {
      expect(isLoopback(h), h).toBe(false)
    }
  })
})

describe("the bearer check", () => {
  it("compares in constant time over digests: any length, never throws", () => {
    const matches = tokenMatcher(Redacted.make(TOKEN))
    expect(matches(TOKEN)).toBe(true)
    for (const other of ["", "x", TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase(), "a".repeat(10_000)]) {
      expect(matches(other)).toBe(false)
    }
  })

  it("reads `Bearer <token>` only", () => {
    expect(bearerTokenOf(`Bearer ${TOKEN}`)).toBe(TOKEN)
    expect(bearerTokenOf(`bearer  ${TOKEN}`)).toBe(TOKEN)
    for (const h of [undefined, "", "Bearer", "Bearer ", `Basic ${TOKEN}`, TOKEN, `Bearer ${TOKEN} extra`]) {
      expect(bearerTokenOf(h), String(h)).toBeUndefined()
    }
  })

  const call = (token: Option.Option<Redacted.Redacted<string>>, authorization?: string) => {
    const app = requireBearer(token)(Effect.succeed(HttpServerResponse.text("served")))
    const request = HttpServerRequest.fromWeb(
      new Request("http://admin/workspace/registry/agents", authorization === undefined ? {} : { headers: { authorization } })
    )
    return Effect.runSync(Effect.provideService(app, HttpServerRequest.HttpServerRequest, request))
  }

  it("401 in the error shape with WWW-Authenticate: Bearer without or with a wrong token; the app with the right one", () => {
    const token = Option.some(Redacted.make(TOKEN))
    for (const authorization of [undefined, "Bearer nope", `Bearer ${TOKEN}x`, `Basic ${TOKEN}`]) {
      const res = call(token, authorization)
      expect(res.status).toBe(401)
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer realm="svc-admin"/)
      if (res.body._tag !== "Uint8Array") throw new Error(`expected a buffered body, got ${res.body._tag}`)
      const body = JSON.parse(new TextDecoder().decode(res.body.body))
      expect(body).toEqual({ statusCode: 401, error: "Unauthorized", message: expect.any(String) })
      expect(JSON.stringify(body)).not.toContain(TOKEN)
    }
    expect(call(token, `Bearer ${TOKEN}`).status).toBe(200)
    // No token configured: nothing required.
    expect(call(Option.none()).status).toBe(200)
  })
})
