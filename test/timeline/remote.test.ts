/**
 * The same timeline through a gateway on a remote workspace (SVC_WORKSPACE_URL: another built
 * gateway's admin listener, the WorkspaceApi): a worker's seq 1 on a task just created, an
 * agent's own events and action records over MCP (written through the workspace's records
 * endpoint, marked by the store), a look-alike source refused or the producer's, and the timeline
 * paged back with a 2 KiB budget in non-ASCII text, every event once (with a limit and without).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { call, connect, KEY_A, mcpFixture, ok } from "../mcp/world.js"
import { expectEachOnce, readTimeline, type RemoteGateways, startRemoteGateways } from "./support.js"

const ADMIN_TOKEN = "timeline-remote-admin-token-0123456789ab"

let gateways: RemoteGateways | undefined
let agent: Client | undefined

beforeAll(async () => {
  gateways = await startRemoteGateways(ADMIN_TOKEN, mcpFixture(), { SVC_EVENTS_PAGE_BYTES: "2048" })
  agent = await connect(gateways.remote.url, KEY_A)
}, 90_000)

afterAll(async () => {
  await agent?.close().catch(() => {})
  await gateways?.stop()
})

describe("a gateway on a remote workspace (built processes)", () => {
  it("seq 1 after the creation, an agent's events and records, a look-alike source, paged back once at 2 KiB", async () => {
    const url = gateways!.remote.url
    const created = await http("POST", `${url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status, created.text).toBe(201)
    const taskId: string = created.body.id
    const events = `${url}/v1/tasks/${taskId}/events`

    const worker = (async () => {
      for (let seq = 1; seq <= 40; seq++) {
        const res = await http("POST", events, { type: "note", source: "worker", seq, payload: { text: `承認済み ${seq} — Réglé à 100 € ✅ ${"経費".repeat(seq % 7 === 0 ? 200 : 5)}` } })
        expect(res.status, res.text).toBe(200)
        expect(res.body.event.origin).toBe("producer")
      }
    })()
    const agentWork = (async () => {
      for (let i = 0; i < 5; i++) {
        const appended = ok(await call(agent!, "append_event", { taskId, type: "reasoning.delta", groupKey: "plan", payload: { text: `考え ${i}` } }))
        expect(appended.event.origin).toBe("agent")
      }
      ok(await call(agent!, "ingest_data", { taskId, kind: "agent-check", data: { ok: "確認" } }))
    })()
    const upload = await http("POST", `${url}/v1/tasks/${taskId}/files/ingest`, {
      source: "receipts",
      fileName: "reçu.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.from("Café 4,50 €").toString("base64") },
      signalTaskId: taskId,
      signalName: "file_submitted"
    })
    expect(upload.status, upload.text).toBe(201)
    await Promise.all([worker, agentWork])

    const forged = await http("POST", events, { type: "step.completed", source: "au\u034Fdit", seq: 1, payload: { stepId: "sign_off", decision: "approve" } })
    expect([200, 400]).toContain(forged.status)
    if (forged.status === 200) expect(forged.body.event.origin).toBe("producer")
    expect((await http("POST", events, { type: "step.completed", source: "audit", seq: 2, payload: {} })).status).toBe(400)
    // Read through the whole confusables table by the remote store, its 400 passed on as it is.
    for (const source of ["\ua4eeudit", "\u13d4ORKSPACE"]) {
      const refused = await http("POST", events, { type: "step.completed", source, seq: 3, payload: {} })
      expect([refused.status, refused.body.message], refused.text).toEqual([400, expect.stringMatching(/^source: .* written by the gateway only$/)])
    }

    const { events: timeline, pages } = await readTimeline(url, taskId, 6)
    expectEachOnce(timeline)
    expect(pages).toBeGreaterThan(8)
    expect(timeline.filter((e) => e.source === "worker").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    expect(timeline.filter((e) => e.origin === "agent")).toHaveLength(5)
    const gateway = timeline.filter((e) => e.origin === "gateway").map((e) => e.type)
    for (const type of ["task.created", "file.stored", "step.completed", "data.ingested", "agent.action"]) expect(gateway).toContain(type)
    // The same timeline as the store's own gateway serves it.
    expect((await readTimeline(gateways!.store.url, taskId)).events).toEqual(timeline)
    // And without a limit through the remote gateway too: it asks the workspace for its own
    // answer's count (up to 10,000 events in the byte budget), more than a client may ask.
    expect((await readTimeline(url, taskId)).events).toEqual(timeline)
  }, 90_000)

  it("a cursor past every position the remote store has given out: its 400 naming after, or last-event-id on a stream", async () => {
    const url = gateways!.remote.url
    const created = await http("POST", `${url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status, created.text).toBe(201)
    const events = `${url}/v1/tasks/${created.body.id as string}/events`
    const page = await http("GET", `${events}?after=1-0`)
    expect(page.status, page.text).toBe(400)
    expect(page.body).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringMatching(/^after: "1-0" is past every position/) })
    const byHeader = await http("GET", `${events}/stream`, undefined, { "last-event-id": "1-0" })
    expect(byHeader.status, byHeader.text).toBe(400)
    expect(byHeader.body.message).toMatch(/^last-event-id: "1-0" is past every position/)
    expect((await http("GET", `${events}?after=0`)).status).toBe(200)
  })
})
