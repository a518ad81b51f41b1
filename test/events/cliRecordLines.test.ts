/**
 * `svc events list` and `follow` print the gateway's own record (the audit
 * events and the engine's) as one readable line each: who (the actor, "Someone" when nobody
 * was named, "Agent <name> (<short id>)" for agent:<uuid>), what, old → new. Other events keep
 * their generic line, a worker's step.completed included, and --json prints the events as
 * served. Against a stand-in gateway serving a fixed timeline shaped like the real one's
 * (payloads as the gateway writes them, README "The audit timeline"; the gateway's own events
 * read with seq = position, a producer's with its own seq; `origin` as the store sets it).
 */
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopAllProcesses, svc } from "../cli/harness.js"

const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const AGENT = "0f6c2a50-1234-4abc-9def-111122223333"
const DOC = "4690847c-7e99-43d1-a8f9-4b0086abe383"
const ROW = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"
const ROW2 = "9c1e3a57-8d0f-4b2c-8e4a-7f9b1d3f5ba8"
const REQ = "5e92f998-5c52-4904-a989-a82d0e6ee887"

/** The gateway's own records: by the store's mark, never by how the source reads. */
const gatewayOrigin = (type: string, source: string) =>
  source === "audit" || source === "workspace" || (source.startsWith("agent:") && type === "agent.action")

/**
 * The event at `position` (a number here, as SQLite writes it): the gateway's read with seq =
 * position, a producer's with its own seq (`extra.seq`).
 */
const ev = (position: number, type: string, source: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  taskId: TASK,
  type,
  source,
  seq: position,
  payload,
  createdAt: `2026-11-26T13:14:${String(10 + position).padStart(2, "0")}.000Z`,
  position: String(position),
  origin: gatewayOrigin(type, source) ? "gateway" : "producer",
  ...extra
})

const TIMELINE = [
  ev(1, "task.created", "audit", {
    workflowId: "expense-review",
    title: "Expense review 2025-01",
    firstStep: "upload_receipts",
    context: { period: "2025-01" },
    actor: "ann@acme.example",
    requestId: REQ
  }),
  ev(2, "file.stored", "audit", {
    documentId: DOC,
    source: "receipts",
    fileName: "receipt.pdf",
    contentType: "application/pdf",
    sizeBytes: 12500,
    signal: "file_submitted",
    actor: null,
    requestId: REQ
  }),
  ev(3, "agent.action", `agent:${AGENT}`, { tool: "submit_file", agentId: AGENT }, { sourceLabel: "Reconciler" }),
  ev(4, "source.submitted", "workspace", { stepId: "upload_receipts", kind: "file", documentIds: [DOC] }),
  ev(5, "step.completed", "workspace", { stepId: "upload_receipts", decision: "submitted", actor: `agent:${AGENT}`, requestId: REQ }),
  ev(6, "row.edited", "audit", {
    ledger: "expenses",
    rowId: ROW,
    field: "amount_gross",
    oldValue: 1240,
    newValue: 124,
    via: "direct",
    actor: "bob@acme.example",
    requestId: REQ
  }),
  ev(7, "row.edited", "audit", {
    ledger: "expenses",
    rowId: ROW,
    field: "merchant",
    oldValue: "Delta",
    newValue: "Delta Air\nLines\u001b[2J",
    via: "row_action",
    stepId: "review_expenses",
    actor: "bob@acme.example",
    requestId: REQ
  }),
  ev(8, "row.rejected", "audit", {
    ledger: "expenses",
    rowId: ROW2,
    previousStatus: "NEEDS_ATTENTION",
    newStatus: "REJECTED",
    via: "row_action",
    stepId: "review_expenses",
    actor: "bob@acme.example",
    requestId: REQ
  }),
  ev(9, "data.ingested", "audit", { taskId: TASK, kind: "expense", count: 3, recordIds: ["a", "b", "c"], signal: null, actor: "ann@acme.example", requestId: REQ }),
  ev(10, "note.added", "worker", { text: "hello\u009b2J" }, { sourceLabel: "Reviewer\u001b[31m", seq: 0 }),
  ev(11, "step.completed", "worker", { step: "review_expenses" }, { sourceLabel: "Reviewer", seq: 1 }),
  ev(12, "step.completed", "workspace", { stepId: "review_expenses", decision: "approve", reason: "looks good", actor: "ann@acme.example", requestId: REQ }),
  ev(13, "task.status_changed", "workspace", { from: "IN_PROGRESS", to: "COMPLETED" }),
  ev(14, "reasoning.delta", "worker", { text: "line one\nline two\u001b[2J" }, { sourceLabel: "Reviewer", groupKey: "g", seq: 2 }),
  // Shaped like the gateway's record, but not marked as its own: a producer's event, read as such.
  ev(15, "row.rejected", "audit", { ledger: "expenses", rowId: ROW2, newStatus: "REJECTED", actor: "mallory" }, {
    origin: "producer",
    seq: 3
  })
]

/** Each event's line in follow's format: `#seq hh:mm:ss type [who] what`. */
const FOLLOW_LINES = [
  "#1 13:14:11 task.created [ann@acme.example] started the task Expense review 2025-01 (workflow expense-review) with period 2025-01",
  "#2 13:14:12 file.stored [Someone] uploaded receipt.pdf (12.2 KB) to receipts",
  `#3 13:14:13 agent.action [Reconciler] {"tool":"submit_file","agentId":"${AGENT}"}`,
  "#4 13:14:14 source.submitted [workspace] Submitted receipt.pdf to step upload_receipts",
  "#5 13:14:15 step.completed [Agent Reconciler (0f6c2a50)] completed step upload_receipts",
  "#6 13:14:16 row.edited [bob@acme.example] changed amount_gross on row 7a9c1e35 of expenses: 1240 → 124, directly in the ledger",
  String.raw`#7 13:14:17 row.edited [bob@acme.example] changed merchant on row 7a9c1e35 of expenses: Delta → "Delta Air\nLines\u001b[2J" at step review_expenses`,
  "#8 13:14:18 row.rejected [bob@acme.example] rejected row 9c1e3a57 of expenses (was NEEDS_ATTENTION) at step review_expenses",
  "#9 13:14:19 data.ingested [ann@acme.example] ingested 3 records (expense)",
  String.raw`#0 13:14:20 note.added [Reviewer\u001b[31m] {"text":"hello\u009b2J"}`,
  `#1 13:14:21 step.completed [Reviewer] {"step":"review_expenses"}`,
  `#12 13:14:22 step.completed [ann@acme.example] approved step review_expenses — "looks good"`,
  "#13 13:14:23 task.status_changed [workspace] Task status changed: IN_PROGRESS → COMPLETED",
  // Reasoning keeps its line breaks; nothing else raw.
  "#2 13:14:24 Reviewer (g) ▸ line one",
  String.raw`line two\u001b[2J`,
  `#3 13:14:25 row.rejected [audit] {"ledger":"expenses","rowId":"${ROW2}","newStatus":"REJECTED","actor":"mallory"}`
]

let server: Server
let url = ""

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://x")
    if (req.method !== "GET" || u.pathname !== `/v1/tasks/${TASK}/events`) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"statusCode":404,"message":"no","error":"Not Found"}')
      return
    }
    const after = u.searchParams.get("after")
    const events = TIMELINE.filter((e) => after === null || Number(e.position) > Number(after))
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ events }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
})
afterAll(async () => {
  stopAllProcesses()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const run = async (...args: Array<string>) => {
  const r = await svc(args, { env: { SVC_URL: url } })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}

describe("svc events: the audit record as sentences", () => {
  it("follow prints one line per event: who, what, old → new; other events as before; nothing raw reaches the terminal", async () => {
    const out = await run("events", "follow", TASK, "--interval", "0.2", "--timeout", "1")
    expect(out.trimEnd().split("\n")).toEqual(FOLLOW_LINES)
    expect(out).not.toMatch(/[\u001b\u009b]/)
  }, 30_000)

  it("list puts the sentence in the PAYLOAD column of the known events and keeps the JSON of the others", async () => {
    const out = await run("events", "list", TASK)
    const rows = out.trimEnd().split("\n")
    expect(rows[0]).toMatch(/^POSITION\s+SEQ\s+CREATED\s+TYPE\s+SOURCE\s+GROUP\s+PAYLOAD$/)
    expect(rows).toHaveLength(TIMELINE.length + 1)
    // Rows by position, each with its seq beside it.
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 2))).toEqual(TIMELINE.map((e) => [e.position, String(e.seq)]))
    const payloadOf = (position: number) => rows.find((r) => r.startsWith(`${position} `))!.replace(/^.*?\s{2}-\s{2,}/, "")
    expect(payloadOf(6)).toBe("bob@acme.example changed amount_gross on row 7a9c1e35 of expenses: 1240 → 124, directly in the ledger")
    expect(payloadOf(2)).toBe("Someone uploaded receipt.pdf (12.2 KB) to receipts")
    expect(payloadOf(5)).toBe("Agent Reconciler (0f6c2a50) completed step upload_receipts")
    expect(payloadOf(12)).toBe(`ann@acme.example approved step review_expenses — "looks good"`)
    expect(payloadOf(13)).toBe("Task status changed: IN_PROGRESS → COMPLETED")
    expect(payloadOf(11)).toBe(`{"step":"review_expenses"}`)
    // Not the gateway's (origin): its JSON, not a sentence, however its source reads.
    expect(payloadOf(15)).toMatch(/^\{"ledger":"expenses"/)
    expect(out).not.toMatch(/[\u001b\u009b]/)
  }, 30_000)

  it("--json prints the events as served", async () => {
    expect(JSON.parse(await run("events", "list", TASK, "--json"))).toEqual({ events: TIMELINE })
    const followed = (await run("events", "follow", TASK, "--interval", "0.2", "--timeout", "1", "--json")).trimEnd().split("\n")
    expect(followed.map((l) => JSON.parse(l))).toEqual(TIMELINE)
  }, 30_000)
})
