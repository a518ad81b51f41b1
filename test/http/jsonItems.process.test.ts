/**
 * A body of many small items is refused before its parse (SVC_MAX_JSON_ITEMS), on the built
 * process: 14 MiB of `[{},{},...]` (5 million objects) to the events endpoint held the event loop
 * for 2-7 s before the event's 1 MiB cap refused it, and health probes waited all that time; a
 * million keys written with escapes, 6-8 s (half a million, 2.5 s). Now each is a 413 naming the limit, nothing is stored,
 * and health stays answered meanwhile. A body within the limit is parsed and stored as before. The
 * admin listener (the workspace API) reads the same setting, 64 items more for what the gateway
 * wraps around a client's body.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { builtGatewayOfFile, healthLatency } from "../files/builtGateway.js"
import { type RunningService, startBuilt } from "../support/process.js"

const gw = builtGatewayOfFile()

const post = async (path: string, body: string | Buffer) => {
  const res = await fetch(`${gw.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body })
  const text = await res.text()
  return { status: res.status, body: JSON.parse(text) }
}

const timeline = async (taskId: string) => {
  const res = await fetch(`${gw.url}/v1/tasks/${taskId}/events?limit=1000`)
  return ((await res.json()) as { events: Array<{ type: string }> }).events.filter((e) => e.type === "many.values")
}

/** Posts `body` while GET /v1/health is polled every 20 ms: the answer and the slowest probe. */
const postWithProbes = async (path: string, body: Buffer) => {
  let polling = true
  const latencies: Array<number> = []
  let firstAnswered: () => void = () => {}
  const warm = new Promise<void>((resolve) => (firstAnswered = resolve))
  const poll = (async () => {
    while (polling) {
      const h = await healthLatency(gw.url)
      expect(h.status).toBe(200)
      latencies.push(h.ms)
      firstAnswered()
      await new Promise((r) => setTimeout(r, 20))
    }
  })()
  // The probes' connection is open before the body is sent: the first probe, sent together with
  // the body's first bytes, read 1.7 s on a machine running two suites at once.
  await warm
  const res = await post(path, body)
  // A few probes after the answer: the loop is free again.
  await new Promise((r) => setTimeout(r, 200))
  polling = false
  await poll
  return { res, slowest: Math.max(...latencies), latencies }
}

describe("a JSON body of millions of items", () => {
  it("half a million keys written with escapes (counted 8 each): 413 before the parse that held the loop 2.5 s, health answered meanwhile", async () => {
    const task = await gw.newTask()
    // 1,000,008 values and keys counted once each: within the limit, had escaped keys not counted more.
    const keys = Array.from({ length: 500_000 }, (_, i) => `"\\"${i}":0`).join(",")
    const { res, slowest, latencies } = await postWithProbes(
      `/v1/tasks/${task}/events`,
      Buffer.from(`{"type":"many.values","source":"flood","seq":3,"payload":{${keys}}}`)
    )
    expect(res.status).toBe(413)
    expect(res.body.message).toContain("more than 1000000 items")
    expect(await timeline(task)).toEqual([])
    expect(slowest, latencies.join(",")).toBeLessThan(1_000)
  })

  it("14 MiB of empty objects: 413 naming SVC_MAX_JSON_ITEMS, nothing stored, health answered meanwhile", async () => {
    const task = await gw.newTask()
    const body = Buffer.from(`{"type":"many.values","source":"flood","seq":1,"payload":{"a":[${Array(5_000_000).fill("{}").join(",")}]}}`)
    const { res, slowest, latencies } = await postWithProbes(`/v1/tasks/${task}/events`, body)
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ statusCode: 413, error: "Payload Too Large" })
    expect(res.body.message).toContain("more than 1000000 items")
    expect(res.body.message).toContain("SVC_MAX_JSON_ITEMS")
    expect(await timeline(task)).toEqual([])
    // Before: one probe waited out the parse (2-7 s). A bound far above the scan (11 ms) and far below that.
    expect(slowest, latencies.join(",")).toBeLessThan(1_000)
  })

  it("a body within the limit: 10,000 ingest rows of 30 fields (610,001 items, 6 MiB) are stored", async () => {
    const task = await gw.newTask()
    const events = Array.from({ length: 10_000 }, (_, i) => ({ data: Object.fromEntries(Array.from({ length: 30 }, (_, k) => [`f${k}`, i * k])) }))
    const res = await post(`/v1/tasks/${task}/data/ingest`, JSON.stringify({ events }))
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBeLessThan(300)
    // One stored record per row.
    expect(res.body).toHaveLength(10_000)
  })
})

describe("the admin listener (the workspace API) and SVC_MAX_JSON_ITEMS", () => {
  let small: RunningService | undefined
  const dir = mkdtempSync(join(tmpdir(), "json-items-"))
  afterAll(async () => {
    await small?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("takes the setting, 64 items more: past them 413, at them the body is read (before: 400 at any count below 1,000,001)", async () => {
    small = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "0", SVC_MAX_JSON_ITEMS: "1000" })
    // An array of n numbers: n + 1 items.
    const body = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i))
    const send = async (url: string, n: number) => {
      const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: body(n) })
      return { status: res.status, body: (await res.json()) as { message: string } }
    }
    const gateway = `${small.url}/v1/tasks/694ebd37-72d4-4ae6-b944-eb027435cd70/events`
    expect((await send(gateway, 999)).status).toBe(400)
    expect((await send(gateway, 1_000)).status).toBe(413)
    const admin = `${small.adminUrl}/workspace/registry/agents`
    expect((await send(admin, 1_063)).status).toBe(400)
    const over = await send(admin, 1_064)
    expect(over.status).toBe(413)
    expect(over.body.message).toContain("more than 1064 items")
  })
})
