/**
 * A few bad keys must not lock out every agent behind one address, on the built
 * process with the official MCP client: failures are counted per client address and per
 * presented key; a valid key is never refused because of other callers' failures. The client
 * address is the socket's unless SVC_CLIENT_ADDRESS_HEADER names a header set by a trusted proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, connect, KEY_A, KEY_B, type McpProcess, ok, postMcp, startMcpProcess } from "./world.js"

const LIMITS = { SVC_MCP_AUTH_FAILURE_BURST: "3", SVC_MCP_AUTH_FAILURE_REFILL_MS: "60000" }

const statuses = async (url: string, keys: ReadonlyArray<string>, headers: Record<string, string> = {}) => {
  const out: Array<number> = []
  for (const key of keys) {
    const res = await postMcp(url, { authorization: `Bearer ${key}`, ...headers })
    await res.arrayBuffer()
    out.push(res.status)
  }
  return out
}

const badKeys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `ak_${prefix}_${i}_not_a_key`)

describe("behind one address (no proxy header configured)", () => {
  let gw: McpProcess
  beforeAll(async () => {
    gw = await startMcpProcess(LIMITS, { built: true })
  }, 120_000)
  afterAll(async () => {
    await gw?.cleanup()
  })

  it("many bad keys from one address, then a valid key from it works at once (the SDK client)", async () => {
    const bad = await statuses(gw.url, badKeys("many", 12))
    expect(bad.slice(0, 3)).toEqual([401, 401, 401])
    expect(bad.slice(3).every((s) => s === 429)).toBe(true)
    for (const key of [KEY_A, KEY_B]) {
      const client = await connect(gw.url, key)
      expect(ok(await call(client, "list_entities")).entities.length).toBeGreaterThan(0)
      await client.close()
    }
    // Still limited for bad keys; the 429 is in the error shape with Retry-After.
    const res = await postMcp(gw.url, { authorization: "Bearer ak_still_bad" })
    expect(res.status).toBe(429)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(await res.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests" })
  })

  it("a forwarded-for header is not trusted by default: it cannot buy a fresh address", async () => {
    const res = await postMcp(gw.url, { authorization: "Bearer ak_spoofed_bad", "x-forwarded-for": "203.0.113.77" })
    expect(res.status).toBe(429)
  })
})

describe("behind a trusted proxy (SVC_CLIENT_ADDRESS_HEADER=x-forwarded-for)", () => {
  let gw: McpProcess
  beforeAll(async () => {
    gw = await startMcpProcess({ ...LIMITS, SVC_CLIENT_ADDRESS_HEADER: "x-forwarded-for" }, { built: true })
  }, 120_000)
  afterAll(async () => {
    await gw?.cleanup()
  })

  const from = (address: string) => ({ "x-forwarded-for": `198.51.100.9, ${address}` })

  it("each client address has its own budget; the proxy's own address is not the client's", async () => {
    const first = await statuses(gw.url, badKeys("one", 5), from("192.0.2.1"))
    expect(first).toEqual([401, 401, 401, 429, 429])
    // Another client behind the same proxy (same socket address) is not limited.
    expect(await statuses(gw.url, badKeys("two", 3), from("192.0.2.2"))).toEqual([401, 401, 401])
    // The nearest proxy's entry is the client: a spoofed leftmost entry does not matter.
    expect(await statuses(gw.url, ["ak_spoof_bad"], { "x-forwarded-for": "192.0.2.50, 192.0.2.1" })).toEqual([429])
    // A valid key from the limited client still works.
    const res = await postMcp(gw.url, { authorization: `Bearer ${KEY_A}`, ...from("192.0.2.1") })
    expect(res.status).toBe(200)
  })

  it("bad attempts with one key are limited, from whatever address they come", async () => {
    const key = "ak_one_key_retried_everywhere"
    const out: Array<number> = []
    for (let i = 0; i < 5; i++) out.push(...await statuses(gw.url, [key], from(`192.0.2.${100 + i}`)))
    expect(out).toEqual([401, 401, 401, 429, 429])
    const res = await postMcp(gw.url, { authorization: `Bearer ${key}`, ...from("192.0.2.200") })
    expect(await res.json()).toMatchObject({ statusCode: 429, message: expect.stringMatching(/this key/) })
  })
})
