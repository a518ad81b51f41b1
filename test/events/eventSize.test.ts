/**
 * One event cannot defeat the timeline's byte budget (built process). A page stops after the
 * event that takes it past SVC_EVENTS_PAGE_BYTES and a larger event goes out alone, so before
 * the cap one 25 MiB event (a body under SVC_MAX_BODY_BYTES) made every answer holding it 25
 * MiB: 15 event streams that did not read took RSS from 320 MB to 1.07 GB until their stall
 * timeout, 20 unread GET /events answers pinned 550 MB. Now a payload over 1 MiB of UTF-8 JSON
 * is a 400 naming `payload` and the cap, through /v1 and the agent tool server alike.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { EXPENSE_TASK } from "../support/world.js"
import { call, connect, KEY_A, type McpProcess, ok, startMcpProcess, toolError } from "../mcp/world.js"

const CAP = 1024 * 1024
/** `{"text":"..."}` of exactly `bytes` UTF-8 bytes, with `unit` (1, 2, 3 or 4 bytes) repeated. */
const payloadOf = (bytes: number, unit = "x") => {
  const size = Buffer.byteLength(unit)
  const frame = Buffer.byteLength(JSON.stringify({ text: "" }))
  const text = unit.repeat(Math.floor((bytes - frame) / size)) + "x".repeat((bytes - frame) % size)
  const payload = { text }
  expect(Buffer.byteLength(JSON.stringify(payload))).toBe(bytes)
  return payload
}

let gw: McpProcess
let agent: Client
beforeAll(async () => {
  gw = await startMcpProcess({ SVC_ADMIN_PORT: "off" }, { built: true })
  agent = await connect(gw.url, KEY_A)
})
afterAll(async () => {
  await agent?.close()
  await gw?.cleanup()
})

describe("an event's payload is capped at 1 MiB of UTF-8 JSON", () => {
  it("POST /v1/tasks/:taskId/events: over the cap is a 400 naming payload; at the cap it is stored", async () => {
    const events = `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`
    // Every body is made before the first request: making them between requests kept this
    // process's event loop busy for seconds on a loaded machine (a 25 MiB string, built and
    // measured), and fetch then wrote on a kept-alive connection the gateway had closed after
    // its announced idle time (Keep-Alive: timeout=5): write EPIPE. A client whose loop is
    // blocked past that time gets the same against any server (seen with a 6 s block).
    const cases = ([[1001, "x"], [1002, "é"], [1003, "€"], [1004, "😀"]] as const).map(([seq, unit]) =>
      ({ seq, unit, over: payloadOf(CAP + 1, unit), at: payloadOf(CAP, unit) }))
    const hugePayload = payloadOf(25 * CAP)
    let lastStored = ""
    for (const { seq, unit, over: overPayload, at: atPayload } of cases) {
      const over = await http("POST", events, { type: "note", source: "worker", seq, payload: overPayload })
      expect(over.status, `unit ${unit}`).toBe(400)
      expect(over.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
      expect(over.body.message).toMatch(/payload/)
      expect(over.body.message).toContain(String(CAP))
      const at = await http("POST", events, { type: "note", source: "worker", seq, payload: atPayload })
      expect(at.status, `unit ${unit}`).toBe(200)
      lastStored = at.body.event.position
    }
    // A 25 MiB event, the case that pinned memory, never reaches the timeline.
    const huge = await http("POST", events, { type: "note", source: "worker", seq: 1005, payload: hugePayload })
    expect(huge.status).toBe(400)
    const page = await http("GET", `${events}?after=${lastStored}`)
    expect(page.status).toBe(200)
    expect(page.body.events.filter((e: any) => e.source === "worker")).toEqual([])
  })

  it("MCP append_event: over the cap is a tool error naming payload, with or without seq", async () => {
    for (const seq of [2001, undefined]) {
      const error = toolError(await call(agent, "append_event", {
        taskId: EXPENSE_TASK,
        type: "reasoning.delta",
        payload: payloadOf(CAP + 1),
        ...(seq === undefined ? {} : { seq })
      }))
      expect(error.message).toMatch(/payload/)
      expect(error.message).toContain(String(CAP))
    }
    const stored = ok(await call(agent, "append_event", { taskId: EXPENSE_TASK, type: "reasoning.delta", payload: payloadOf(CAP) }))
    expect(stored.ok).toBe(true)
  })
})
