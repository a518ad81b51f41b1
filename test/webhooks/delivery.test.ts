/**
 * Outbound webhooks on the built process (`npm start`'s dist/main.js) with a real receiver:
 * deliveries verified with the reference library (`standardwebhooks`), per-task order, retries
 * with the same webhook-id, Retry-After, 410, the address guard, rotation, the admin API's
 * refusals, metrics, and a kill -9 right after a change's 2xx.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { type Received, type Receiver, startReceiver, until } from "./receiver.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = "webhook-test-admin-token-0123456789"

let receiver: Receiver
let gw: RunningService
let dir: string

const env = () => ({
  SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
  SVC_ADMIN_TOKEN: TOKEN,
  SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`,
  SVC_WEBHOOK_RETRY_SCHEDULE: "0,300ms,300ms,300ms,1s,1s",
  SVC_WEBHOOK_TIMEOUT_MS: "2000",
  SVC_WEBHOOK_DISABLE_AFTER_MS: "2500",
  SVC_PUBLIC_URL: "https://gateway.example"
})

const admin = (method: string, path: string, body?: unknown) =>
  http(method, `${gw.adminUrl}/workspace${path}`, body, { authorization: `Bearer ${TOKEN}` })

const subscribe = async (path: string, extra: Record<string, unknown> = {}) => {
  const res = await admin("POST", "/webhooks", { tenant: "acme", url: receiver.url(path), ...extra })
  expect(res.status, res.text).toBe(201)
  return res.body as { id: string; secret: string }
}

const newTask = async () => {
  const res = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, {
    workflowId: "expense-review",
    context: { period: "2026-11" }
  })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}

const ofTask = (taskId: string) => (r: Received) => (JSON.parse(r.body) as { data: { taskId?: string } }).data.taskId === taskId

const verify = (secret: string, r: Received) =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as {
    type: string
    timestamp: string
    data: Record<string, unknown>
  }

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-"))
  receiver = await startReceiver()
  gw = await startBuilt(env())
})

afterAll(async () => {
  await gw?.stop()
  await receiver?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("delivery", () => {
  it("sends the task's events in order, signed as Standard Webhooks 1.0 (verified by the reference library)", async () => {
    const sub = await subscribe("/ordered")
    expect(sub.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    const taskId = await newTask()
    const ingest = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
      source: "receipts",
      fileName: "receipt.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50 USD").toString("base64") },
      signalTaskId: taskId,
      signalName: "file_submitted"
    })
    expect(ingest.status, ingest.text).toBeLessThan(300)
    const approved = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved", comments: "ok" })
    expect(approved.status, approved.text).toBe(200)

    await receiver.waitFor("/ordered", 1, 15_000, (r) => ofTask(taskId)(r) && /"decision":"approve"/.test(r.body))
    const got = receiver.received("/ordered").filter(ofTask(taskId))
    const events = got.map((r) => verify(sub.secret, r))
    const types = events.map((e) => e.type)
    // task.waiting wherever a step becomes current: at creation, after the upload step, and (not
    // awaited here) after the approval.
    expect(types.slice(0, 7)).toEqual([
      "task.created",
      "task.waiting",
      "file.stored",
      "source.submitted",
      "step.completed",
      "task.waiting",
      "step.completed"
    ])
    expect(types).toContain("step.completed")
    for (const e of events) {
      expect(e.data).toMatchObject({ taskId, entityId: ACME_US, tenantId: expect.any(String) })
      expect(JSON.stringify(e).length).toBeLessThan(4096)
    }
    // Thin: no start context, no file bytes.
    expect(events[0]!.data.context).toBeUndefined()
    expect(JSON.stringify(events)).not.toContain(Buffer.from("Coffee 4.50 USD").toString("base64"))
    const completed = events.filter((e) => e.type === "step.completed")
    expect(completed.at(-1)!.data).toMatchObject({ stepId: "review_expenses", decision: "approve" })
    // Each message its own id; the timestamp header is seconds, near now.
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(got.length)
    const ts = Number(got[0]!.headers["webhook-timestamp"])
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(60)
    // A body changed in transit fails verification (the library really checks).
    expect(() => new Webhook(sub.secret).verify(got[0]!.body.replace("task.created", "task.createe"), got[0]!.headers as any)).toThrow()
  })

  it("retries a failing receiver with the same webhook-id and logs each attempt", async () => {
    receiver.answer("/flaky", (n) => ({ status: n < 2 ? 500 : 200 }))
    const sub = await subscribe("/flaky", { events: ["task.created"] })
    const taskId = await newTask()
    const got = await receiver.waitFor("/flaky", 3, 15_000, ofTask(taskId))
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1)
    for (const r of got) expect(verify(sub.secret, r).type).toBe("task.created")
    // Spaced by the schedule (300 ms), not sent at once.
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(250)
    const log = await until("the third attempt in the log", async () => {
      const res = await admin("GET", `/webhooks/${sub.id}/deliveries?tenant=acme`)
      return res.body.length >= 3 ? res.body : undefined
    })
    expect(log.slice(0, 3).map((a: any) => [a.outcome, a.statusCode])).toEqual([["delivered", 200], ["retrying", 500], ["retrying", 500]])
    expect(log[0].deliveryId).toBe(got[0]!.headers["webhook-id"])
  })

  it("honours Retry-After on 429, and a 3xx is a failure (not followed)", async () => {
    receiver.answer("/busy", (n) => (n === 0 ? { status: 429, headers: { "retry-after": "2" } } : n === 1 ? { status: 302, headers: { location: receiver.url("/elsewhere") } } : { status: 200 }))
    await subscribe("/busy", { events: ["task.created"] })
    const taskId = await newTask()
    const got = await receiver.waitFor("/busy", 3, 20_000, ofTask(taskId))
    expect(got[1]!.at - got[0]!.at).toBeGreaterThanOrEqual(1900)
    expect(receiver.received("/elsewhere")).toHaveLength(0)
  })

  it("a 410 disables the subscription and says why", async () => {
    receiver.answer("/gone", () => ({ status: 410 }))
    const sub = await subscribe("/gone", { events: ["task.created"] })
    await newTask()
    const disabled = await until("the subscription disabled", async () => {
      const res = await admin("GET", `/webhooks/${sub.id}?tenant=acme`)
      return res.body.enabled === false ? res.body : undefined
    })
    expect(disabled.disabledReason).toMatch(/410/)
    const before = receiver.received("/gone").length
    await newTask()
    await new Promise((r) => setTimeout(r, 800))
    expect(receiver.received("/gone").length).toBe(before)
  })

  it("refuses private addresses at connect time unless allow-listed (the url provider's guard)", async () => {
    const other = await startReceiver()
    try {
      const res = await admin("POST", "/webhooks", { tenant: "acme", url: other.url("/private"), events: ["task.created"] })
      expect(res.status).toBe(201)
      await newTask()
      const log = await until("a refused attempt", async () => {
        const l = await admin("GET", `/webhooks/${res.body.id}/deliveries?tenant=acme`)
        return l.body.length > 0 ? l.body : undefined
      })
      expect(log[0].statusCode).toBeNull()
      expect(log[0].error).toMatch(/refused to connect to 127\.0\.0\.1.*loopback.*SVC_WEBHOOK_URL_ALLOW/)
      expect(other.received("/private")).toHaveLength(0)
    } finally {
      await other.close()
    }
  })

  it("after rotate-secret every delivery verifies with the new and with the old secret", async () => {
    const sub = await subscribe("/rotated", { events: ["task.created"] })
    const rotated = await admin("POST", `/webhooks/${sub.id}/rotate-secret?tenant=acme`)
    expect(rotated.status).toBe(200)
    expect(rotated.body.secret).not.toBe(sub.secret)
    const taskId = await newTask()
    const [r] = await receiver.waitFor("/rotated", 1, 15_000, ofTask(taskId))
    expect(verify(rotated.body.secret, r!).type).toBe("task.created")
    expect(verify(sub.secret, r!).type).toBe("task.created")
    expect(String(r!.headers["webhook-signature"]).split(" ")).toHaveLength(2)
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, r!)).toThrow()
  })

  it("a second rotation within the day keeps the first secret signing for the 24 hours it was promised", async () => {
    const sub = await subscribe("/rotated-twice", { events: ["task.created"] })
    const first = await admin("POST", `/webhooks/${sub.id}/rotate-secret?tenant=acme`)
    const second = await admin("POST", `/webhooks/${sub.id}/rotate-secret?tenant=acme`)
    expect([first.status, second.status]).toEqual([200, 200])
    const taskId = await newTask()
    const [r] = await receiver.waitFor("/rotated-twice", 1, 15_000, ofTask(taskId))
    // A receiver still on the original secret (its overlap runs until tomorrow): dropped before.
    expect(verify(sub.secret, r!).type).toBe("task.created")
    expect(verify(first.body.secret, r!).type).toBe("task.created")
    expect(verify(second.body.secret, r!).type).toBe("task.created")
    expect(String(r!.headers["webhook-signature"]).split(" ")).toHaveLength(3)
    // However often it is rotated, at most 4 secrets sign (the newest ones).
    const more = []
    for (let i = 0; i < 4; i++) more.push((await admin("POST", `/webhooks/${sub.id}/rotate-secret?tenant=acme`)).body.secret as string)
    const later = await newTask()
    const [l] = await receiver.waitFor("/rotated-twice", 1, 15_000, ofTask(later))
    expect(String(l!.headers["webhook-signature"]).split(" ")).toHaveLength(4)
    expect(verify(more[3]!, l!).type).toBe("task.created")
    expect(verify(more[0]!, l!).type).toBe("task.created")
    expect(() => verify(sub.secret, l!)).toThrow()
  })
})

describe("tenant-level events", () => {
  it("the GL's connection and disconnection, in order, with no task", async () => {
    const sub = await subscribe("/gl", { events: ["gl.connected", "gl.disconnected"] })
    const session = await http("POST", `${gw.url}/v1/gl/connect/session`, { serviceId: "xero" })
    expect(session.status, session.text).toBe(200)
    const done = await http("POST", `${gw.url}/workspace/gl/connect/${session.body.consumerId}/complete`, { service: "xero" })
    expect(done.status, done.text).toBe(204)
    const gone = await http("DELETE", `${gw.url}/v1/gl`)
    expect(gone.status, gone.text).toBe(204)
    const got = await receiver.waitFor("/gl", 2)
    const events = got.map((r) => verify(sub.secret, r))
    expect(events.map((e) => e.type)).toEqual(["gl.connected", "gl.disconnected"])
    expect(events[0]!.data).toEqual({ tenantId: expect.any(String), provider: "local", service: "xero", status: "ACTIVE" })
    expect(events[0]!.data.taskId).toBeUndefined()
  })
})

describe("isolation", () => {
  it("a slow receiver holds up neither the writes nor another subscription", async () => {
    // Answers after the 2 s timeout: every attempt to it times out.
    receiver.answer("/slow", () => ({ status: 200, delayMs: 10_000 }))
    const slow = await subscribe("/slow", { events: ["task.created"] })
    await subscribe("/fast", { events: ["task.created"] })
    const started = Date.now()
    const ids: Array<string> = []
    for (let i = 0; i < 10; i++) {
      const t0 = Date.now()
      ids.push(await newTask())
      expect(Date.now() - t0).toBeLessThan(1500)
    }
    await receiver.waitFor("/fast", 10, 10_000, (r) => ids.some((id) => ofTask(id)(r)))
    // The fast receiver got all ten before the slow one's first attempts had even timed out.
    expect(Date.now() - started).toBeLessThan(2000 + 1500)
    // One subscription holds at most 4 attempts at once.
    expect(receiver.maxInFlight("/slow")).toBeGreaterThan(0)
    expect(receiver.maxInFlight("/slow")).toBeLessThanOrEqual(4)
    const log = await until("a timed-out attempt", async () => {
      const l = await admin("GET", `/webhooks/${slow.id}/deliveries?tenant=acme`)
      return l.body.length > 0 ? l.body : undefined
    })
    expect(log[0].error).toMatch(/no answer within 2000 ms \(SVC_WEBHOOK_TIMEOUT_MS\)/)
    expect((await admin("DELETE", `/webhooks/${slow.id}?tenant=acme`)).status).toBe(204)
  })

  it("a subscription failing for SVC_WEBHOOK_DISABLE_AFTER_MS is disabled and says so in its log", async () => {
    receiver.answer("/down", () => ({ status: 500 }))
    const sub = await subscribe("/down", { events: ["task.created"] })
    await newTask()
    const disabled = await until("the subscription disabled", async () => {
      const res = await admin("GET", `/webhooks/${sub.id}?tenant=acme`)
      return res.body.enabled === false ? res.body : undefined
    }, 20_000)
    expect(disabled.disabledReason).toMatch(/failing since .*SVC_WEBHOOK_DISABLE_AFTER_MS/)
    const log = (await admin("GET", `/webhooks/${sub.id}/deliveries?tenant=acme`)).body
    expect(log[0].error).toMatch(/subscription disabled: failing since/)
    // Enabled again, what waited for it goes out (the message was parked, not dropped).
    receiver.answer("/down", () => ({ status: 200 }))
    const before = receiver.received("/down").length
    expect((await admin("POST", `/webhooks/${sub.id}/enable?tenant=acme`)).body.enabled).toBe(true)
    await receiver.waitFor("/down", before + 1)
  })
})

describe("the admin API", () => {
  it("needs the admin token, names bad fields, and answers 404 for another tenant's subscription", async () => {
    const noToken = await http("GET", `${gw.adminUrl}/workspace/webhooks?tenant=acme`)
    expect(noToken.status).toBe(401)
    const bad = await admin("POST", "/webhooks", { tenant: "acme", url: "ftp://example.com/x" })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toMatch(/url: scheme "ftp" is refused/)
    const creds = await admin("POST", "/webhooks", { tenant: "acme", url: "https://u:p@example.com/x" })
    expect(creds.body.message).toMatch(/credentials/)
    const unknownType = await admin("POST", "/webhooks", { tenant: "acme", url: "https://example.com/x", events: ["task.deleted"] })
    expect(unknownType.status).toBe(400)
    expect(unknownType.body.message).toMatch(/events\[0\]|unknown event type/)
    const unknownTenant = await admin("POST", "/webhooks", { tenant: "nobody", url: "https://example.com/x" })
    expect(unknownTenant.status).toBe(400)
    expect(unknownTenant.body.message).toMatch(/tenant/)
    const extra = await admin("POST", "/webhooks", { tenant: "acme", url: "https://example.com/x", secret: "mine" })
    expect(extra.status).toBe(400)
    const sub = await subscribe("/never", { events: ["gl.connected"] })
    const list = await admin("GET", "/webhooks?tenant=acme")
    expect(list.body.some((w: any) => w.id === sub.id)).toBe(true)
    expect(JSON.stringify(list.body)).not.toContain("whsec_")
    // globex is the demo's other tenant: acme's subscription is not found there, for every operation.
    for (const [method, path] of [["GET", ""], ["DELETE", ""], ["POST", "/rotate-secret"], ["POST", "/disable"], ["GET", "/deliveries"]] as const) {
      const res = await admin(method, `/webhooks/${sub.id}${path}?tenant=globex`)
      expect(res.status, `${method} ${path}`).toBe(404)
    }
    expect((await admin("GET", "/webhooks?tenant=globex")).body).toEqual([])
    const notUuid = await admin("GET", "/webhooks/not-a-uuid?tenant=acme")
    expect(notUuid.status).toBe(404)
    const removed = await admin("DELETE", `/webhooks/${sub.id}?tenant=acme`)
    expect(removed.status).toBe(204)
    expect((await admin("GET", `/webhooks/${sub.id}?tenant=acme`)).status).toBe(404)
    const doc = await admin("GET", "/openapi.json")
    expect(Object.keys(doc.body.paths)).toContain("/workspace/webhooks/{id}/rotate-secret")
  })

  it("reports deliveries by outcome and the queue's age in /metrics", async () => {
    const text = (await http("GET", `${gw.url}/metrics`)).text
    expect(text).toMatch(/webhook_deliveries_total\{outcome="delivered"\} [1-9]/)
    expect(text).toMatch(/webhook_deliveries_total\{outcome="retrying"\} [1-9]/)
    expect(text).toMatch(/webhook_queue_oldest_age_seconds /)
  })
})

describe("never lost", () => {
  it("a change answered 2xx is delivered after a kill -9 and a restart", async () => {
    const path = "/after-kill"
    // The receiver is down: the message waits in the outbox.
    const sub = await subscribe(path, { events: ["task.created"] })
    receiver.answer(path, () => ({ status: 503, delayMs: 0 }))
    const taskId = await newTask()
    gw.kill("SIGKILL")
    await gw.exited
    receiver.answer(path, () => ({ status: 200 }))
    gw = await startBuilt(env())
    const got = await receiver.waitFor(path, 1, 20_000, (r) => ofTask(taskId)(r) && true)
    expect(verify(sub.secret, got[0]!).type).toBe("task.created")
    await until("a delivered attempt", async () => {
      const l = await admin("GET", `/webhooks/${sub.id}/deliveries?tenant=acme`)
      return l.body.some((a: any) => a.outcome === "delivered") ? true : undefined
    })
  })
})
