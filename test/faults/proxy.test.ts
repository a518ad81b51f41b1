/**
 * The fault proxy itself (proxy.ts) does what its table says, in front of a plain HTTP server,
 * so that a fault test failing means the process under test, not the proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { exchange } from "./load.js"
import { type FaultProxy, startFaultProxy } from "./proxy.js"

let target: http.Server
let proxy: FaultProxy
const agents: Array<http.Agent> = []
const agent = (keepAlive = true) => {
  const a = new http.Agent({ keepAlive, maxSockets: 1 })
  agents.push(a)
  return a
}

beforeAll(async () => {
  target = http.createServer((req, res) => {
    const size = Number(new URL(req.url!, "http://x").searchParams.get("size") ?? "2")
    res.writeHead(200, { "content-type": "text/plain", "content-length": String(size) })
    res.end("k".repeat(size))
  })
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve))
  proxy = await startFaultProxy(`http://127.0.0.1:${(target.address() as AddressInfo).port}`)
})
afterAll(async () => {
  for (const a of agents) a.destroy()
  await proxy.close()
  target.closeAllConnections()
  await new Promise((resolve) => target.close(resolve))
})

const get = (a: http.Agent, path = "/") => exchange(a, { method: "GET", url: `${proxy.url}${path}` })

describe("the fault proxy", () => {
  it("passes, delays, stalls and releases, on open connections too", async () => {
    await proxy.set({ kind: "pass" })
    const a = agent()
    expect((await get(a)).status).toBe(200)

    await proxy.set({ kind: "delay", ms: 300, direction: "down" })
    const t0 = performance.now()
    expect((await get(a)).status).toBe(200)
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290)

    await proxy.set({ kind: "stall" })
    let settled = false
    const stalled = get(a).then((r) => {
      settled = true
      return r
    })
    await new Promise((r) => setTimeout(r, 300))
    expect(settled).toBe(false)
    await proxy.set({ kind: "pass" })
    expect((await stalled).status).toBe(200)
  })

  it("stalls an answer after `afterBytes` (headers through, body held)", async () => {
    await proxy.set({ kind: "stall", direction: "down", afterBytes: 1000 })
    const a = agent(false)
    let headersAt = 0
    let received = 0
    const req = http.get(`${proxy.url}/?size=100000`, { agent: a }, (res) => {
      headersAt = performance.now()
      res.on("data", (chunk: Buffer) => (received += chunk.length))
    })
    req.on("error", () => {})
    await new Promise((r) => setTimeout(r, 300))
    expect(headersAt).toBeGreaterThan(0)
    expect(received).toBeGreaterThan(0)
    expect(received).toBeLessThan(1000)
    req.destroy()
    await proxy.set({ kind: "pass" })
  })

  it("drops, resets and refuses; counts what it saw", async () => {
    const seen: Array<string> = []
    const stop = proxy.observe((direction, chunk) => direction === "up" && seen.push(chunk.toString("latin1").split("\r\n")[0]!))
    await proxy.set({ kind: "drop" })
    expect((await get(agent(false))).error).toMatch(/ECONNRESET|socket hang up/)
    await proxy.set({ kind: "reset" })
    expect((await get(agent(false))).error).toBe("ECONNRESET")
    await proxy.set({ kind: "refuse" })
    expect((await get(agent(false))).error).toBe("ECONNREFUSED")
    await proxy.set({ kind: "pass" })
    expect((await get(agent(false), "/again")).status).toBe(200)
    stop()
    expect(seen).toContain("GET /again HTTP/1.1")
    expect(proxy.stats().accepted).toBeGreaterThan(0)
  })
})
