/**
 * A body of many small values is refused before its parse (SVC_MAX_JSON_VALUES), on the built
 * process: 14 MiB of `[{},{},...]` (5 million objects) to the events endpoint held the event loop
 * for 2-7 s before the event's 1 MiB cap refused it, and health probes waited all that time. Now
 * it is a 413 naming the limit, nothing is stored, and health stays answered meanwhile. A body
 * within the limit is parsed and stored as before.
 */
import { describe, expect, it } from "vitest"
import { builtGatewayOfFile, healthLatency } from "../files/builtGateway.js"

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

describe("a JSON body of millions of values", () => {
  it("14 MiB of empty objects: 413 naming SVC_MAX_JSON_VALUES, nothing stored, health answered meanwhile", async () => {
    const task = await gw.newTask()
    const body = Buffer.from(`{"type":"many.values","source":"flood","seq":1,"payload":{"a":[${Array(5_000_000).fill("{}").join(",")}]}}`)
    let polling = true
    const latencies: Array<number> = []
    const poll = (async () => {
      while (polling) {
        const h = await healthLatency(gw.url)
        expect(h.status).toBe(200)
        latencies.push(h.ms)
        await new Promise((r) => setTimeout(r, 20))
      }
    })()
    const res = await post(`/v1/tasks/${task}/events`, body)
    // A few probes after the answer: the loop is free again.
    await new Promise((r) => setTimeout(r, 200))
    polling = false
    await poll
    expect(res.status).toBe(413)
    expect(res.body).toMatchObject({ statusCode: 413, error: "Payload Too Large" })
    expect(res.body.message).toContain("more than 1000000 values")
    expect(res.body.message).toContain("SVC_MAX_JSON_VALUES")
    expect(await timeline(task)).toEqual([])
    // Before: one probe waited out the parse (2-7 s). A bound far above the scan (11 ms) and far below that.
    expect(Math.max(...latencies), latencies.join(",")).toBeLessThan(1_000)
  })

  it("a body within the limit: 10,000 ingest rows of 30 fields (310,001 values, 6 MiB) are stored", async () => {
    const task = await gw.newTask()
    const events = Array.from({ length: 10_000 }, (_, i) => ({ data: Object.fromEntries(Array.from({ length: 30 }, (_, k) => [`f${k}`, i * k])) }))
    const res = await post(`/v1/tasks/${task}/data/ingest`, JSON.stringify({ events }))
    expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBeLessThan(300)
    // One stored record per row.
    expect(res.body).toHaveLength(10_000)
  })
})
