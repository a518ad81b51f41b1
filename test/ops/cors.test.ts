/**
 * CORS off by default (OPTIONS answers 405), an allow-list when SVC_CORS_ORIGINS is
 * set: preflights from allowed origins answer 204 with methods and headers, credentials only
 * when configured.
 */
import * as Result from "effect/Result"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { corsConfig } from "../../src/http/input/cors.js"
import { describeStartFailure } from "../../src/http/server/failStart.js"
import { readEnv } from "../fixtures/config.js"
import { type OpsGateway, startOps } from "./support.js"

const APP = "https://app.example.com"
const preflight = (url: string, origin: string, method = "POST") =>
  fetch(`${url}/v1/entities`, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": "content-type" }
  })

describe("CORS off (default)", () => {
  let gw: OpsGateway
  beforeAll(async () => {
    gw = await startOps()
  })
  afterAll(() => gw.close())

  it("answers OPTIONS with 405 and sends no CORS headers", async () => {
    const res = await preflight(gw.url, APP)
    expect(res.status).toBe(405)
    expect(res.headers.get("access-control-allow-origin")).toBeNull()
    const get = await fetch(`${gw.url}/v1/health`, { headers: { origin: APP } })
    expect(get.headers.get("access-control-allow-origin")).toBeNull()
  })
})

describe("CORS with an allow-list", () => {
  let gw: OpsGateway
  beforeAll(async () => {
    gw = await startOps({ cors: { origins: [APP], credentials: false } })
  })
  afterAll(() => gw.close())

  it("answers a preflight from an allowed origin with 204, methods and headers", async () => {
    const res = await preflight(gw.url, APP)
    expect(res.status).toBe(204)
    expect(res.headers.get("access-control-allow-origin")).toBe(APP)
    expect(res.headers.get("access-control-allow-methods")).toContain("POST")
    expect(res.headers.get("access-control-allow-methods")).toContain("PATCH")
    expect(res.headers.get("access-control-allow-headers")).toContain("content-type")
    expect(res.headers.get("access-control-allow-headers")).toContain("x-request-id")
    expect(res.headers.get("access-control-allow-credentials")).toBeNull()
    expect(res.headers.get("vary")).toContain("Origin")
  })

  it("treats any other origin as without CORS", async () => {
    const res = await preflight(gw.url, "https://evil.example.com")
    expect(res.status).toBe(405)
    expect(res.headers.get("access-control-allow-origin")).toBeNull()
    const get = await fetch(`${gw.url}/v1/health`, { headers: { origin: "https://evil.example.com" } })
    expect(get.headers.get("access-control-allow-origin")).toBeNull()
    expect(get.headers.get("vary")).toContain("Origin")
  })

  it("lets an allowed origin read answers, errors included, and the request id", async () => {
    const ok = await fetch(`${gw.url}/v1/health`, { headers: { origin: APP } })
    expect(ok.headers.get("access-control-allow-origin")).toBe(APP)
    expect(ok.headers.get("access-control-expose-headers")).toContain("x-request-id")
    const missing = await fetch(`${gw.url}/v1/tasks/00000000-0000-4000-8000-000000000000/ui`, { headers: { origin: APP } })
    expect(missing.status).toBe(404)
    expect(missing.headers.get("access-control-allow-origin")).toBe(APP)
  })

  it("sends Access-Control-Allow-Credentials only when configured", async () => {
    const withCredentials = await startOps({ cors: { origins: [APP], credentials: true } })
    try {
      const res = await preflight(withCredentials.url, APP)
      expect(res.headers.get("access-control-allow-credentials")).toBe("true")
      const get = await fetch(`${withCredentials.url}/v1/health`, { headers: { origin: APP } })
      expect(get.headers.get("access-control-allow-credentials")).toBe("true")
    } finally {
      await withCredentials.close()
    }
  })
})

describe("CORS settings", () => {
  const read = (env: Record<string, string>) =>
    readEnv(corsConfig, env)

  it("reads origins, normalized, and refuses what is not one, naming the setting", () => {
    const ok = read({ SVC_CORS_ORIGINS: "https://App.Example.com, http://localhost:5173/" })
    expect(ok).toMatchObject({ _tag: "Success", success: { origins: ["https://app.example.com", "http://localhost:5173"], credentials: false } })
    const bad = read({ SVC_CORS_ORIGINS: "https://app.example.com/path" })
    if (!Result.isFailure(bad)) throw new Error("expected a failure")
    expect(describeStartFailure(bad.failure, { SVC_CORS_ORIGINS: "https://app.example.com/path" })).toMatch(
      /^SVC_CORS_ORIGINS="https:\/\/app\.example\.com\/path": .*no path/
    )
  })

  it("refuses credentials with any origin", () => {
    const bad = read({ SVC_CORS_ORIGINS: "*", SVC_CORS_CREDENTIALS: "true" })
    if (!Result.isFailure(bad)) throw new Error("expected a failure")
    expect(describeStartFailure(bad.failure, { SVC_CORS_CREDENTIALS: "true" })).toMatch(/^SVC_CORS_CREDENTIALS="true": expected false/)
  })
})
