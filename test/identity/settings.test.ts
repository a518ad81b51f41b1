/**
 * The identity settings: off by default, and a set-up that is half there refuses to start with
 * one line per problem (src/http/server/failStart.ts prints them), on the built process too.
 */
import { describe, expect, it } from "vitest"
import * as Result from "effect/Result"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { describeStartFailure } from "../../src/http/server/failStart.js"
import { identityConfigFromEnv } from "../../src/config/IdentityConfig.js"
import { startBuilt } from "../support/process.js"
import { readEnv } from "../fixtures/config.js"

const read = (env: Record<string, string>) => readEnv(identityConfigFromEnv, env)

const failure = (env: Record<string, string>) => {
  const result = read(env)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return describeStartFailure(result.failure, env)
}

describe("identity settings", () => {
  it("are off by default", () => {
    expect(read({})).toEqual(Result.succeed({ header: undefined, jwt: undefined }))
  })

  it("read the actor header (lower-cased, required unless SVC_ACTOR_REQUIRED=false)", () => {
    expect(read({ SVC_ACTOR_HEADER: "X-Forwarded-Email" })).toEqual(Result.succeed({ header: { name: "x-forwarded-email", required: true }, jwt: undefined }))
    expect(read({ SVC_ACTOR_HEADER: "x-user", SVC_ACTOR_REQUIRED: "false" })).toMatchObject(Result.succeed({ header: { required: false } }))
  })

  it("read a JWT set-up: a URL or a file, an audience list, sub by default", () => {
    const url = read({ SVC_JWT_JWKS: "https://idp.test/jwks", SVC_JWT_ISSUER: "https://idp.test/", SVC_JWT_AUDIENCE: "a, b" })
    expect(Result.getOrThrow(url).jwt).toMatchObject({ jwks: { _tag: "Url" }, audience: ["a", "b"], actorClaim: "sub", tenantClaim: undefined, cooldownMs: 30_000, fetchTimeoutMs: 5_000 })
    const file = read({ SVC_JWT_JWKS: "file:///etc/jwks.json", SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a", SVC_JWT_TENANT_CLAIM: "org" })
    expect(Result.getOrThrow(file).jwt).toMatchObject({ jwks: { _tag: "File", path: "/etc/jwks.json" }, tenantClaim: "org" })
  })

  it("refuse a half-configured JWT set-up, naming what is missing", () => {
    const message = failure({ SVC_JWT_JWKS: "https://idp.test/jwks" })
    expect(message).toContain("2 settings are not valid")
    expect(message).toMatch(/SVC_JWT_ISSUER is required with SVC_JWT_JWKS/)
    expect(message).toMatch(/SVC_JWT_AUDIENCE is required with SVC_JWT_JWKS/)
    expect(failure({ SVC_JWT_ISSUER: "https://idp.test/", SVC_JWT_AUDIENCE: "a" })).toMatch(
      /^SVC_JWT_JWKS is not set, but SVC_JWT_ISSUER, SVC_JWT_AUDIENCE are/
    )
    expect(failure({ SVC_JWT_JWKS: "ftp://idp.test/jwks", SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" })).toMatch(/^SVC_JWT_JWKS="ftp:.*expected an https URL or a file path/)
    expect(failure({ SVC_JWT_JWKS: "/x", SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: " , " })).toMatch(/SVC_JWT_AUDIENCE=.*expected one audience/)
  })

  it("take keys over https or from a file; plain http only on loopback", () => {
    const jwt = (jwks: string) => read({ SVC_JWT_JWKS: jwks, SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" })
    for (const remote of ["http://idp.test/jwks", "HTTP://idp.test/jwks", "http://10.0.0.5/jwks", "http://[2001:db8::1]/jwks", "http://127.0.0.1.nip.io/jwks"]) {
      expect(failure({ SVC_JWT_JWKS: remote, SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" })).toMatch(
        /^SVC_JWT_JWKS=".*": expected an https URL or a file path \(plain http lets anyone on the way replace the keys/
      )
    }
    for (const local of ["http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]:9/jwks", "https://idp.test/jwks"]) {
      expect(Result.getOrThrow(jwt(local)).jwt?.jwks).toMatchObject({ _tag: "Url" })
    }
  })

  it("bound a token's lifetime: SVC_JWT_MAX_AGE seconds, a day by default", () => {
    const base = { SVC_JWT_JWKS: "/k.json", SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" }
    expect(Result.getOrThrow(read(base)).jwt?.maxAgeSeconds).toBe(86_400)
    expect(Result.getOrThrow(read({ ...base, SVC_JWT_MAX_AGE: "900" })).jwt?.maxAgeSeconds).toBe(900)
    for (const bad of ["0", "-1", "1h", "abc", "1.5"]) expect(failure({ ...base, SVC_JWT_MAX_AGE: bad })).toMatch(/^SVC_JWT_MAX_AGE=/)
  })

  it("refuse a header name that is not one, or carries credentials, and a requirement nothing can meet", () => {
    expect(failure({ SVC_ACTOR_HEADER: "x forwarded" })).toMatch(/^SVC_ACTOR_HEADER="x forwarded": expected a header name/)
    expect(failure({ SVC_ACTOR_HEADER: "Authorization" })).toMatch(/credentials/)
    expect(failure({ SVC_ACTOR_REQUIRED: "true" })).toMatch(/^SVC_ACTOR_REQUIRED is true, but nothing names the actor/)
  })
})

describe("the built process with bad identity settings", () => {
  it("does not start, and says why in one line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "identity-settings-"))
    try {
      const db = pathToFileURL(join(dir, "workspace.db")).href
      const run = (env: Record<string, string>) =>
        startBuilt({ SVC_DATABASE_URL: db, ...env }).then(
          async (s) => {
            await s.stop()
            throw new Error("started")
          },
          (e: Error) => e.message
        )
      expect(await run({ SVC_JWT_JWKS: join(dir, "missing.json"), SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" })).toMatch(
        /Cannot start: SVC_JWT_JWKS=".*missing\.json": no such file\n/
      )
      const broken = join(dir, "broken.json")
      writeFileSync(broken, JSON.stringify({ keys: [] }))
      const noKeys = await run({ SVC_JWT_JWKS: broken, SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" })
      expect(noKeys).toMatch(/Cannot start: SVC_JWT_JWKS=".*broken\.json": holds no keys\n/)
      // Said before anything opens: no database, no port (a start failing half-built once hung).
      expect(noKeys).not.toMatch(/workspace: database/)
      expect(await run({ SVC_JWT_JWKS: broken })).toMatch(/Cannot start: 2 settings are not valid:\n {2}SVC_JWT_ISSUER is required/)
      // Identity at the edge and an admin listener without a token: that listener would be the way around it.
      const keys = join(dir, "keys.json")
      writeFileSync(keys, JSON.stringify({ keys: [{ kty: "EC", crv: "P-256", x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0", kid: "k" }] }))
      for (const identity of [{ SVC_ACTOR_HEADER: "x-forwarded-email" }, { SVC_JWT_JWKS: keys, SVC_JWT_ISSUER: "i", SVC_JWT_AUDIENCE: "a" }]) {
        expect(await run({ ...identity, SVC_ADMIN_PORT: "0" })).toMatch(
          /Cannot start: SVC_ADMIN_TOKEN is not set, but SVC_(ACTOR_HEADER|JWT_JWKS) names who acts on the gateway's port: .*Set SVC_ADMIN_TOKEN .*, or SVC_ADMIN_PORT=off\n/
        )
        // With a token, or with no admin listener, it starts.
        for (const admin of [{ SVC_ADMIN_PORT: "0", SVC_ADMIN_TOKEN: "admin-token-0123456789" }, { SVC_ADMIN_PORT: "off" }]) {
          const started = await startBuilt({ SVC_DATABASE_URL: db, ...identity, ...admin })
          await started.stop()
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})
