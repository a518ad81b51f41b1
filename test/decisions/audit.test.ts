/**
 * Identity, the audit trail, four-eyes and the retry after a 504, on the built process:
 * the edge names who acts (SVC_ACTOR_HEADER), every write lands in the task's timeline with
 * who and which request (old and new values for a cell), a four-eyes step refuses its earlier
 * decider, and an Idempotency-Key retry after a 504 decides one step only (a 504 needs an HTTP
 * workspace: the embedded store's lock waits answer 503 with Retry-After, never 504).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFaultProxy } from "../faults/proxy.js"
import { http, type RunningService, startBuilt, startService, WORKSPACE_ENTRY } from "../support/process.js"

const DECISIONS = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
/** Demo data: a task at review_expenses and one of its NEEDS_ATTENTION rows. */
const EXPENSE_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const ROW = "0349944d-fb03-40cf-a73a-21b10c2a61e9"
const ROW_2 = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"

const dirs: Array<string> = []
const running: Array<RunningService> = []
const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), "decisions-audit-"))
  dirs.push(dir)
  return join(dir, "workspace.db")
}
const start = async (env: Record<string, string>) => {
  const service = await startBuilt(env)
  running.push(service)
  return service
}

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const as = (actor: string, requestId?: string) => ({
  "x-forwarded-email": actor,
  ...(requestId !== undefined ? { "x-request-id": requestId } : {})
})

const timeline = async (gw: RunningService, taskId: string) =>
  ((await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ type: string; source: string; payload: any }>)

describe("who acts, in the timeline (SVC_ACTOR_HEADER, built process)", () => {
  let gw: RunningService
  beforeAll(async () => {
    gw = await start({ SVC_DATABASE_URL: `file:${tempDb()}`, SVC_ACTOR_HEADER: "x-forwarded-email" })
  }, 60_000)

  it("a cell edit records field, old and new value, who and the request; a row reject its previous status", async () => {
    const before = (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/ui`)).body.step.args.rows.find((r: any) => r.id === ROW)
    const old = before.fields.amount_gross
    const edit = await http("PATCH", `${gw.url}/v1/subledgers/expenses/${ROW}`, { field: "amount_gross", value: 124 }, as("carol@acme.test", "req-edit-1"))
    expect(edit.status).toBe(200)
    const reject = await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/row-action`, {
      ledger: "expenses",
      action: "reject_row",
      rowId: ROW_2
    }, as("dan@acme.test", "req-reject-1"))
    expect(reject.status).toBe(200)
    const events = await timeline(gw, EXPENSE_TASK)
    expect(events.find((e) => e.type === "row.edited")).toMatchObject({
      source: "audit",
      payload: {
        ledger: "expenses",
        rowId: ROW,
        field: "amount_gross",
        oldValue: old,
        newValue: 124,
        via: "direct",
        actor: "carol@acme.test",
        requestId: "req-edit-1"
      }
    })
    expect(events.find((e) => e.type === "row.rejected")).toMatchObject({
      source: "audit",
      payload: {
        rowId: ROW_2,
        previousStatus: "NEEDS_ATTENTION",
        newStatus: "REJECTED",
        via: "row_action",
        stepId: "review_expenses",
        actor: "dan@acme.test",
        requestId: "req-reject-1"
      }
    })
  })

  it("task start, upload, data ingest and the decision each name who did it", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, {
      workflowId: "expense-review",
      context: { period: "2026-11" }
    }, as("ana@acme.test"))
    expect(created.status).toBe(201)
    const taskId = created.body.id
    const upload = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, {
      source: "receipts",
      fileName: "receipt.pdf",
      contentType: "application/pdf",
      data: Buffer.from("%PDF-1.4 receipt").toString("base64"),
      signalTaskId: taskId,
      signalName: "file_submitted"
    }, as("ben@acme.test"))
    expect(upload.status).toBe(201)
    const data = await http("POST", `${gw.url}/v1/tasks/${taskId}/data/ingest`, {
      events: [{ data: { amount: 1 } }, { data: { amount: 2 } }],
      kind: "expense"
    }, as("ben@acme.test"))
    expect(data.status).toBe(201)
    expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved", comments: "ok" }, as("carol@acme.test"))).status).toBe(200)
    const events = await timeline(gw, taskId)
    const who = events.map((e) => [e.type, e.payload.actor ?? null])
    expect(who).toEqual(expect.arrayContaining([
      ["task.created", "ana@acme.test"],
      ["file.stored", "ben@acme.test"],
      ["data.ingested", "ben@acme.test"],
      ["step.completed", "ben@acme.test"],
      ["step.completed", "carol@acme.test"]
    ]))
    expect(events.find((e) => e.type === "file.stored")!.payload).toMatchObject({
      fileName: "receipt.pdf",
      contentType: "application/pdf",
      source: "receipts",
      sizeBytes: 16
    })
    expect(events.find((e) => e.type === "data.ingested")!.payload).toMatchObject({ count: 2, kind: "expense" })
    const snapshots = (await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body
    expect(snapshots.upload_receipts.submittedBy).toBe("ben@acme.test")
    expect(snapshots.review_expenses).toMatchObject({ decision: "approved", decidedBy: "carol@acme.test" })
  })
})

describe("four-eyes (requireDistinctDecider, built process)", () => {
  it("the controller cannot also approve as CFO; another person can; nobody named is refused", async () => {
    const gw = await start({
      SVC_DATABASE_URL: `file:${tempDb()}`,
      SVC_SEED_FILE: DECISIONS,
      SVC_TENANT_SLUG: "acme",
      SVC_ACTOR_HEADER: "x-forwarded-email",
      SVC_ACTOR_REQUIRED: "false"
    })
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run-four-eyes", context: {} }, as("ana@acme.test"))
    const taskId = created.body.id
    const approve = (headers: Record<string, string>) => http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, headers)
    expect((await approve(as("ana@acme.test"))).status).toBe(200)
    const same = await approve(as("ana@acme.test"))
    expect(same.status).toBe(403)
    expect(same.body).toMatchObject({ statusCode: 403, error: "Forbidden" })
    expect(same.body.message).toMatch(/four-eyes/)
    expect(same.body.message).toMatch(/controller_approval/)
    const nobody = await approve({})
    expect(nobody.status).toBe(403)
    expect(nobody.body.message).toMatch(/names nobody/)
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step.id).toBe("cfo_approval")
    expect((await approve(as("bob@acme.test"))).status).toBe(200)
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.task.status).toBe("COMPLETED")
  }, 60_000)
})

describe("an Idempotency-Key retry after a 504 (built gateway over an HTTP workspace)", () => {
  it("the first attempt's answer is held past the deadline; its retries decide one step only, then a new decision the next", async () => {
    const ws = await startService(
      { SVC_DATABASE_URL: `file:${tempDb()}`, SVC_SEED_FILE: DECISIONS },
      WORKSPACE_ENTRY,
      "SVC_WORKSPACE_PORT"
    )
    running.push(ws)
    const proxy = await startFaultProxy(ws.url)
    try {
      const gw = await start({ SVC_WORKSPACE_URL: proxy.url, SVC_TENANT_SLUG: "acme", SVC_REQUEST_DEADLINE_MS: "1500" })
      const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
      const taskId = created.body.id
      const key = { "idempotency-key": "approve-controller-once" }
      // The workspace's answers arrive after the deadline: the gateway answers 504 (the write
      // itself reaches the workspace and commits, or not: the client cannot know).
      proxy.set({ kind: "delay", ms: 2500, direction: "down" })
      const first = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, key)
      expect([first.status, first.body?.error]).toEqual([504, "Gateway Timeout"])
      proxy.set({ kind: "pass" })
      for (let i = 0; i < 3; i++) {
        const retry = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, key)
        expect([retry.status, retry.text], `retry ${i}`).toEqual([200, `{"ok":true}`])
      }
      expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step.id).toBe("cfo_approval")
      expect(Object.keys((await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body)).toEqual(["controller_approval"])
      // A new decision (no key) after the client saw the CFO's step decides that one.
      expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" })).status).toBe(200)
      expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step.id).toBe("upload_remittance")
    } finally {
      await proxy.close()
    }
  }, 60_000)
})
