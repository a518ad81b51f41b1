/**
 * Repeated authentication failures are slowed down: the limiter and the client address on their
 * own, and through the real HTTP stack in-process (the embedded store behind it), where a
 * limited address is answered 429 with Retry-After for bad keys but a valid key still gets in
 * (the built process: ./lockout.test.ts).
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseFixture } from "../../src/domain/fixture.js"
import { addressBucket, clientAddress } from "../../src/http/server/clientAddress.js"
import { makeFailureLimiter } from "../../src/mcp/limiter.js"
import { makeGateway } from "../support/gateway.js"
import { baseUrl } from "../fixtures/http.js"
import { envProvider } from "../fixtures/config.js"
import { call, connect, KEY_A, KEY_B, mcpFixture, ok, postMcp } from "./world.js"

describe("the failure limiter", () => {
  it("allows a burst, then one attempt per refill interval", () => {
    const limiter = makeFailureLimiter({ burst: 3, refillMs: 1000 })
    const t0 = 1_000_000
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfterMs("1.2.3.4", t0)).toBe(0)
      limiter.recordFailure("1.2.3.4", t0)
    }
    expect(limiter.retryAfterMs("1.2.3.4", t0)).toBe(1000)
    expect(limiter.retryAfterMs("1.2.3.4", t0 + 400)).toBe(600)
    expect(limiter.retryAfterMs("5.6.7.8", t0)).toBe(0)
    expect(limiter.retryAfterMs("1.2.3.4", t0 + 1000)).toBe(0)
    limiter.recordFailure("1.2.3.4", t0 + 1000)
    expect(limiter.retryAfterMs("1.2.3.4", t0 + 1000)).toBe(1000)
    // Fully refilled after burst × interval.
    expect(limiter.retryAfterMs("1.2.3.4", t0 + 5000)).toBe(0)
    for (let i = 0; i < 3; i++) limiter.recordFailure("1.2.3.4", t0 + 5000)
    expect(limiter.retryAfterMs("1.2.3.4", t0 + 5000)).toBeGreaterThan(0)
  })

  it("keeps a bounded number of addresses", () => {
    const limiter = makeFailureLimiter({ burst: 1, refillMs: 60_000, maxAddresses: 100 })
    for (let i = 0; i < 1000; i++) limiter.recordFailure(`10.0.${i >> 8}.${i & 255}`, 0)
    // The oldest were dropped, the newest are still limited.
    expect(limiter.retryAfterMs("10.0.0.0", 1)).toBe(0)
    expect(limiter.retryAfterMs("10.0.3.231", 1)).toBeGreaterThan(0)
  })
})

describe("the client address failures are counted under", () => {
  const xff = (value: string, hops = 1) => clientAddress("10.9.9.9", { "x-forwarded-for": value }, { header: "x-forwarded-for", hops })

  it("is the socket's unless a trusted header is configured", () => {
    expect(clientAddress("10.9.9.9", { "x-forwarded-for": "1.2.3.4" }, { header: undefined, hops: 1 })).toBe("10.9.9.9")
    expect(clientAddress(undefined, {}, { header: undefined, hops: 1 })).toBe("unknown")
  })

  it("is the entry `hops` places from the right: what the nearest trusted proxies wrote", () => {
    expect(xff("1.2.3.4")).toBe("1.2.3.4")
    expect(xff("6.6.6.6, 1.2.3.4")).toBe("1.2.3.4")
    expect(xff("6.6.6.6, 1.2.3.4, 10.0.0.2", 2)).toBe("1.2.3.4")
    expect(xff("1.2.3.4", 3)).toBe("1.2.3.4")
    expect(xff("[2001:db8::1]:443")).toBe("2001:db8::1")
    expect(xff("1.2.3.4:5678")).toBe("1.2.3.4")
    // Missing, empty or not an address: the socket's.
    expect(xff("")).toBe("10.9.9.9")
    expect(xff("1.2.3.4, garbage")).toBe("10.9.9.9")
    expect(clientAddress("10.9.9.9", {}, { header: "x-forwarded-for", hops: 1 })).toBe("10.9.9.9")
  })

  it("groups IPv6 by /64 and unmaps IPv4-mapped addresses", () => {
    expect(addressBucket("::ffff:127.0.0.1")).toBe("127.0.0.1")
    expect(addressBucket("203.0.113.5")).toBe("203.0.113.5")
    expect(addressBucket("2001:db8:1:2:aaaa::1")).toBe("2001:0db8:0001:0002::/64")
    expect(addressBucket("2001:DB8:1:2:ffff:ffff:ffff:ffff")).toBe("2001:0db8:0001:0002::/64")
    expect(addressBucket("::1")).toBe("0000:0000:0000:0000::/64")
    expect(addressBucket("fe80::1%eth0")).toBe("fe80:0000:0000:0000::/64")
    expect(addressBucket("64:ff9b::192.0.2.33")).toBe("0064:ff9b:0000:0000::/64")
    expect(addressBucket("unknown")).toBe("unknown")
  })
})

describe("through the HTTP stack (in-process, embedded store)", () => {
  const fixture = Effect.runSync(parseFixture("mcp", mcpFixture()))
  const { layer } = makeGateway({ fixture })
  const runtime = ManagedRuntime.make(
    Layer.provide(
      layer,
      ConfigProvider.layer(envProvider({
        SVC_MCP_AUTH_FAILURE_BURST: "3",
        SVC_MCP_AUTH_FAILURE_REFILL_MS: "60000"
      }))
    )
  )
  let url = ""

  beforeAll(async () => {
    url = await runtime.runPromise(baseUrl)
  })
  afterAll(() => runtime.dispose())

  it("the store behind the in-process gateway authenticates the same keys", async () => {
    const client = await connect(url, KEY_B)
    expect(ok(await call(client, "list_assigned_steps")).steps).toEqual([])
    await client.close()
  })

  it("after the burst of failures: 429 with Retry-After for bad or no keys, never for a valid one; successes cost nothing", async () => {
    for (let i = 0; i < 5; i++) expect((await postMcp(url, { authorization: `Bearer ${KEY_A}` })).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await postMcp(url, { authorization: `Bearer wrong-${i}` })).status).toBe(401)
    expect((await postMcp(url, { authorization: `Bearer ${KEY_A}` })).status).toBe(200)
    for (const authorization of ["Bearer wrong-again", "Basic not-a-bearer"]) {
      const res = await postMcp(url, { authorization })
      expect(res.status).toBe(429)
      const retryAfter = Number(res.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(await res.json()).toEqual({
        statusCode: 429,
        error: "Too Many Requests",
        message: `Too many failed authentications from this address; retry in ${retryAfter} s`
      })
    }
  })
})
