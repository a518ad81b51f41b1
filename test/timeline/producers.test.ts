/**
 * A producer's seqs are its own, on the built process: a worker streams seq 1..150 (ASCII,
 * accented, CJK and emoji payloads) into a task just created while, at the same time, a person
 * uploads with the submit signal, ingests and approves it to COMPLETED and an agent acts on it
 * over a real MCP client. Every post is acknowledged (no 409, no 5xx: nothing the gateway, the
 * person or the agent writes takes a worker's seq), and the timeline paged back with a small
 * byte budget (SVC_EVENTS_PAGE_BYTES=2048) and a small limit holds every stored event exactly
 * once, each producer's in seq order. Before the positions, the gateway's own events took seqs
 * from the same space (task.created at seq 1: the worker's seq 1 was a 409), and a page cut by
 * UTF-8 bytes stopped without saying hasMore.
 */
import { createClient } from "@libsql/client"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pathToFileURL } from "node:url"
import { http } from "../support/process.js"
import { ACME_US } from "../support/world.js"
import { call, connect, KEY_A, mcpFixture, ok } from "../mcp/world.js"
import { type BuiltGateway, byPosition, expectEachOnce, readTimeline, startBuiltGateway, type TimelineEvent } from "./support.js"

const PAGE_BYTES = 2048
const WORKER_EVENTS = 150
const CHECKER_EVENTS = 40

/** The worker's payload for `seq`: plain, accented, CJK (some long enough to fill a page alone) and emoji text. */
const text = (seq: number): string => {
  switch (seq % 5) {
    case 0:
      return `plain note ${seq}`
    case 1:
      return `Réglé à 100 € — reçu n°${seq}, café crème`
    case 2:
      return `承認済み ${seq} ${"経費精算書を確認しました。".repeat(seq % 3 === 0 ? 60 : 3)}`
    case 3:
      return `✅🧾💶 ${seq} 👩🏽‍💼 done`
    default:
      return `Überprüft ${seq}: Ελληνικά, русский, עברית, العربية`
  }
}

let gw: BuiltGateway
let agent: Client | undefined

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_EVENTS_PAGE_BYTES: String(PAGE_BYTES), SVC_ADMIN_PORT: "off" }, mcpFixture())
  agent = await connect(gw.url, KEY_A)
}, 60_000)

afterAll(async () => {
  await agent?.close().catch(() => {})
  await gw?.cleanup()
})

/** Every answer of the run: [what, status]. */
const answers: Array<readonly [string, number]> = []

const post = async (what: string, path: string, body: unknown) => {
  const res = await http("POST", `${gw.url}${path}`, body)
  answers.push([what, res.status])
  return res
}

describe("a producer's seqs are its own (built process, SQLite)", () => {
  it("a worker's seq 1..150 while a person and an MCP agent act on the task: every post 200, every event paged back once, in seq order", async () => {
    const created = await post("create task", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(created.status, created.text).toBe(201)
    const taskId: string = created.body.id

    // The worker's seq 1 on the task just created (whose task.created event is already there).
    const stored = new Map<number, TimelineEvent>()
    const postWorker = async (source: string, seq: number) => {
      const res = await post(`${source} seq ${seq}`, `/v1/tasks/${taskId}/events`, {
        type: "worker.note",
        source,
        seq,
        payload: { seq, text: text(seq) }
      })
      if (res.status === 200 && source === "worker") stored.set(seq, res.body.event)
      return res
    }
    const first = await postWorker("worker", 1)
    expect(first.status, first.text).toBe(200)
    expect(first.body.event).toMatchObject({ seq: 1, source: "worker", origin: "producer" })

    const worker = (async () => {
      for (let seq = 2; seq <= WORKER_EVENTS; seq++) await postWorker("worker", seq)
    })()
    // A second producer on the same task with the same seq values: another seq space.
    const checker = (async () => {
      for (let seq = 1; seq <= CHECKER_EVENTS; seq++) await postWorker("checker", seq)
    })()

    const person = (async () => {
      const upload = await post("upload", `/v1/tasks/${taskId}/files/ingest`, {
        source: "receipts",
        fileName: "reçu-承認.pdf",
        fileRef: { provider: "inline_base64", data: Buffer.from("Café 4,50 €").toString("base64") },
        signalTaskId: taskId,
        signalName: "file_submitted"
      })
      expect(upload.status, upload.text).toBe(201)
      for (let batch = 0; batch < 3; batch++) {
        const ingest = await post("ingest", `/v1/tasks/${taskId}/data/ingest`, {
          kind: "expense",
          events: Array.from({ length: 5 }, (_, i) => ({ data: { batch, i, merchant: "Crêperie 東京 🍣", amount: 12.5 + i } }))
        })
        expect(ingest.status, ingest.text).toBe(201)
      }
      // The upload's signal moves the task to review_expenses; approve it, then sign_off.
      for (const step of ["review_expenses", "sign_off"]) {
        const deadline = Date.now() + 10_000
        while ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id !== step) {
          if (Date.now() > deadline) throw new Error(`the task never reached ${step}`)
          await new Promise((r) => setTimeout(r, 25))
        }
        const approved = await post(`approve ${step}`, `/v1/tasks/${taskId}/action`, { type: "approved", step, comments: `vu ✔ ${step}` })
        expect(approved.status, approved.text).toBe(200)
      }
    })()

    // The agent: its own events (the next of its source), and writes that each leave an agent.action record.
    const agentEvents: Array<TimelineEvent> = []
    let agentWrites = 0
    const agentWork = (async () => {
      for (let i = 0; i < 12; i++) {
        const appended = ok(await call(agent!, "append_event", {
          taskId,
          type: "reasoning.delta",
          groupKey: "plan",
          payload: { text: i % 2 === 0 ? `pensée n°${i} — vérifié` : `考え ${i} 🤖` }
        }))
        agentEvents.push(appended.event)
        if (i % 4 === 0) {
          ok(await call(agent!, "ingest_data", { taskId, kind: "agent-check", events: [{ data: { i, note: "Contrôlé ✓" } }, { data: { i, note: "確認" } }] }))
          agentWrites++
        }
        if (i === 6) {
          ok(await call(agent!, "submit_file", {
            taskId,
            source: "agent_notes",
            fileName: "notes.txt",
            fileRef: { provider: "inline_base64", data: Buffer.from("notes ✓").toString("base64") }
          }))
          agentWrites++
        }
      }
    })()

    await Promise.all([worker, checker, person, agentWork])

    // Every post acknowledged: no 409 (a seq taken by someone else), no 5xx.
    expect(answers.filter(([, status]) => status >= 300)).toEqual([])
    expect(stored.size).toBe(WORKER_EVENTS)
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.task.status).toBe("COMPLETED")

    // The timeline paged back at 2 KiB and 7 events an answer.
    const { events, pages } = await readTimeline(gw.url, taskId, 7)
    expect(pages).toBeGreaterThan(events.length / 7)
    expectEachOnce(events)

    // Exactly the events the store holds for the task, in its order.
    const db = createClient({ url: pathToFileURL(gw.dbFile).href })
    try {
      const rows = (await db.execute({ sql: "SELECT tx, position FROM events WHERE task_id = ? ORDER BY tx, position", args: [taskId] })).rows
      expect(events.map((e) => e.position)).toEqual(rows.map((r) => String(r.position)))
    } finally {
      db.close()
    }

    // The worker's events: 1..150 in order, each as acknowledged, its text intact.
    const fromWorker = events.filter((e) => e.source === "worker")
    expect(fromWorker.map((e) => e.seq)).toEqual(Array.from({ length: WORKER_EVENTS }, (_, i) => i + 1))
    for (const e of fromWorker) {
      expect(e).toEqual(stored.get(e.seq))
      expect(e.payload).toEqual({ seq: e.seq, text: text(e.seq) })
      expect(e.origin).toBe("producer")
    }
    expect(events.filter((e) => e.source === "checker").map((e) => e.seq)).toEqual(
      Array.from({ length: CHECKER_EVENTS }, (_, i) => i + 1)
    )

    // The agent's own events, each once, as acknowledged, in the order it wrote them.
    const index = byPosition(events)
    for (const e of agentEvents) expect(index.get(e.position)).toEqual(e)
    const ownAgent = events.filter((e) => e.origin === "agent")
    expect(ownAgent.map((e) => e.position)).toEqual(agentEvents.map((e) => e.position))
    const agentSeqs = ownAgent.map((e) => e.seq)
    expect(agentSeqs).toEqual([...agentSeqs].sort((a, b) => a - b))
    expect(new Set(agentSeqs).size).toBe(agentSeqs.length)

    // The gateway's own record, all there and marked as such.
    const gateway = events.filter((e) => e.origin === "gateway")
    const count = (type: string) => gateway.filter((e) => e.type === type).length
    expect(count("task.created")).toBe(1)
    // upload_receipts completed by the file's signal, then the two approvals.
    expect(count("step.completed")).toBe(3)
    expect(count("task.status_changed")).toBe(1)
    expect(count("source.submitted")).toBe(1)
    expect(count("file.stored")).toBe(2)
    expect(count("data.ingested")).toBe(3 + 3)
    expect(count("agent.action")).toBe(agentWrites)
    expect(events.length).toBe(WORKER_EVENTS + CHECKER_EVENTS + agentEvents.length + gateway.length)

    // The agent pages the same timeline through list_events, following nextAfter.
    const viaMcp: Array<TimelineEvent> = []
    let after: string | undefined
    for (let n = 0; n < 1000; n++) {
      const page = ok(await call(agent!, "list_events", { taskId, limit: 9, ...(after !== undefined ? { after } : {}) }))
      viaMcp.push(...page.events)
      if (page.hasMore !== true) break
      after = page.nextAfter
    }
    expect(viaMcp.map((e) => e.position)).toEqual(events.map((e) => e.position))
  }, 90_000)

  it("a page cut by UTF-8 bytes says so: no limit, 3-byte characters, every answer's hasMore followed to the end", async () => {
    const created = await post("create task", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-12" } })
    expect(created.status).toBe(201)
    const taskId: string = created.body.id
    // About 700 bytes of UTF-8 each (230 UTF-16 units): three fill a 2 KiB page by bytes, nine by units.
    for (let seq = 1; seq <= 40; seq++) {
      const res = await post("cjk", `/v1/tasks/${taskId}/events`, { type: "note", source: "worker", seq, payload: { text: "承認".repeat(115) } })
      expect(res.status).toBe(200)
    }
    const { events, pages } = await readTimeline(gw.url, taskId)
    expectEachOnce(events)
    expect(events.filter((e) => e.source === "worker").map((e) => e.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1))
    expect(pages).toBeGreaterThan(10)
  })
})
