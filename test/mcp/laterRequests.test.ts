/**
 * The tool server's handler is made by the first /mcp request (src/mcp/route.ts), and what it
 * keeps must be the process's services, never that request's own entries: its deadline, its
 * Idempotency-Key. Two built gateways: one whose admin listener is the workspace service, one in
 * front of it (SVC_WORKSPACE_URL) with a short request deadline, as the workspace HTTP client is
 * what reads both per call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ACME_US } from "../support/world.js"
import { type RemoteGateways, startRemoteGateways } from "../timeline/support.js"
import { KEY_A, mcpFixture, postMcp } from "./world.js"

const ADMIN_TOKEN = "later-requests-admin-token"
const DEADLINE_MS = 1500

let gateways: RemoteGateways | undefined

beforeAll(async () => {
  gateways = await startRemoteGateways(ADMIN_TOKEN, mcpFixture(), { SVC_REQUEST_DEADLINE_MS: String(DEADLINE_MS) })
}, 90_000)

afterAll(async () => {
  await gateways?.stop()
})

/** One tools/call over a raw POST (stateless server): its status and structured result. */
const callTool = async (name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) => {
  const res = await postMcp(gateways!.remote.url, { authorization: `Bearer ${KEY_A}`, ...headers }, {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name, arguments: args }
  })
  const text = await res.text()
  let structured: any
  try {
    structured = JSON.parse(text).result?.structuredContent
  } catch {
    structured = undefined
  }
  return { status: res.status, text, structured }
}

const startTask = (period: string, headers?: Record<string, string>) =>
  callTool("start_task", { entityId: ACME_US, workflowId: "expense-review", context: { period } }, headers)

describe("a later /mcp request carries its own request's state, not the first one's", () => {
  it("the first request's Idempotency-Key and deadline are not every later request's", async () => {
    // The first /mcp request of the process makes the handler; it names a key for its write.
    const first = await startTask("2026-01", { "idempotency-key": "the-first-mcp-request" })
    expect(first.status, first.text).toBe(200)
    const firstId: string = first.structured.task.id
    const firstDone = Date.now()

    // A later write without a key is a write of its own, not a replay of the first one's.
    const second = await startTask("2026-02")
    expect(second.status, second.text).toBe(200)
    expect(second.structured.task.id).not.toBe(firstId)
    expect(second.structured.task.title).toContain("2026-02")

    // Past the first request's deadline (a clock is the state here: nothing else tells it),
    // a later request still has its own whole budget.
    await expect.poll(() => Date.now() - firstDone > DEADLINE_MS + 200, { interval: 100, timeout: DEADLINE_MS * 3 }).toBe(true)
    const entities = await callTool("list_entities", {})
    expect(entities.status, entities.text).toBe(200)
    expect(entities.text).not.toContain("deadline")
    expect(entities.structured.entities.length).toBeGreaterThan(0)
    const third = await startTask("2026-03")
    expect(third.status, third.text).toBe(200)
    expect(third.structured.task.title).toContain("2026-03")
  })
})
