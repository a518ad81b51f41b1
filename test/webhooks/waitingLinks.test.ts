/**
 * Decision links in task.waiting webhooks, on the built process with a real receiver (README
 * "Outbound webhooks" and "Decision links"): an APPROVAL step's named people (not its groups)
 * each get an approve/reject pair; the approve page's POST decides as that person under the
 * step's rules (assignment, four-eyes); a retried delivery carries the same links; without
 * SVC_PUBLIC_URL no link is made.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { type Received, type Receiver, startReceiver, until } from "./receiver.js"

const ACME = "6a1f0d0e-5b43-4b6e-9c1d-1f0a2b3c4d5e"
const ENTITY = "8c3f2a2a-7d65-4d80-9e3f-3b2c4d5e6f70"
const GLOBEX = "7b2e1f1f-6c54-4c7f-8d2e-2a1b3c4d5e6f"
const GLOBEX_ENTITY = "9d4a3b3b-8e76-4e91-af4a-4c3d5e6f7081"
const TOKEN = "waiting-links-admin-token-0123456789"
/** Where people reach the gateway (a proxy in front): links are made under it. */
const PUBLIC = "https://approvals.example.test/acme"

const approval = (id: string, title: string, extra: Record<string, unknown>) => ({
  id,
  title,
  displayHint: { component: "APPROVAL", config: {} },
  args: { amount: "12,480.00 USD" },
  ...extra
})

const writeWorld = (dir: string) => {
  const file = join(dir, "world.json")
  writeFileSync(file, JSON.stringify({
    tenants: [{ id: ACME, slug: "acme", name: "Acme" }, { id: GLOBEX, slug: "globex", name: "Globex" }],
    entities: [
      { id: ENTITY, tenantId: ACME, slug: "acme-us", name: "Acme US Inc." },
      { id: GLOBEX_ENTITY, tenantId: GLOBEX, slug: "globex-us", name: "Globex US" }
    ],
    workflows: [{
      id: "payment-run",
      name: "Payment run",
      tenantId: null,
      runbook: {
        configSchema: { global: { type: "object", properties: {} } },
        steps: [
          approval("controller_approval", "Controller approval", {
            assignees: ["ann@acme.example", "group:finance", "Bob@Acme.example"]
          }),
          approval("cfo_approval", "CFO approval", {
            assignees: ["ann@acme.example", "bob@acme.example", "carol@acme.example", "CAROL@acme.example"],
            requireDistinctDecider: true
          }),
          approval("board_approval", "Board approval", { assignees: ["group:board"] }),
          { id: "file_receipt", title: "File the receipt", displayHint: { component: "FILE_UPLOAD", config: {} }, args: {} }
        ]
      }
    }]
  }))
  return file
}

let receiver: Receiver
let gw: RunningService
let dir: string

const env = (extra: Record<string, string> = {}) => ({
  SVC_TENANT_SLUG: "acme",
  SVC_SEED_FILE: writeWorld(dir),
  SVC_ADMIN_TOKEN: TOKEN,
  SVC_ACTOR_HEADER: "x-forwarded-email",
  SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`,
  SVC_WEBHOOK_RETRY_SCHEDULE: "0,300ms,300ms,300ms",
  SVC_WEBHOOK_TIMEOUT_MS: "2000",
  ...extra
})

const subscribe = async (on: RunningService, path: string, tenant = "acme") => {
  const res = await http("POST", `${on.adminUrl}/workspace/webhooks`, { tenant, url: receiver.url(path), events: ["task.waiting"] }, {
    authorization: `Bearer ${TOKEN}`
  })
  expect(res.status, res.text).toBe(201)
  return res.body as { id: string; secret: string }
}

const newTask = async (on: RunningService) => {
  const res = await http("POST", `${on.url}/v1/entities/${ENTITY}/tasks`, { workflowId: "payment-run", context: {} }, {
    "x-forwarded-email": "ann@acme.example"
  })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}

/** A gateway bound to globex on the acme gateway's database, people reaching it at `publicUrl`. */
const startGlobexGateway = (publicUrl: string) =>
  startBuilt(env({ SVC_TENANT_SLUG: "globex", SVC_DATABASE_URL: `file:${join(dir, "with.db")}`, SVC_PUBLIC_URL: publicUrl, SVC_ADMIN_PORT: "0" }))

/** A globex task written by the acme gateway's process (its admin listener): its id. */
const newGlobexTaskViaAcme = async () => {
  const created = await http("POST", `${gw.adminUrl}/workspace/tenants/${GLOBEX}/entities/${GLOBEX_ENTITY}/tasks`, {
    workflowId: "payment-run",
    context: {}
  }, { authorization: `Bearer ${TOKEN}`, "x-svc-actor": "gina@globex.example" })
  expect(created.status, created.text).toBe(201)
  return created.body.id as string
}

interface WaitingLink {
  readonly actor: string
  readonly approveUrl: string
  readonly rejectUrl: string
  readonly expiresAt: string
}
interface Waiting {
  readonly type: string
  readonly data: { taskId: string; stepId: string; assignees: Array<string>; links?: Array<WaitingLink> }
}

const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Waiting

/** The task.waiting of `taskId` at `stepId`, verified with the subscription's secret. */
const waitingAt = async (path: string, secret: string, taskId: string, stepId: string) => {
  const [r] = await receiver.waitFor(path, 1, 15_000, (r) => {
    const d = (JSON.parse(r.body) as Waiting).data
    return d.taskId === taskId && d.stepId === stepId
  })
  return verify(secret, r!)
}

/** A link's URL on the process under test (the public URL's proxy, in effect). */
const local = (url: string) => {
  expect(url.startsWith(`${PUBLIC}/links/`)).toBe(true)
  return gw.url + url.slice(PUBLIC.length)
}
/** What the link page's script sends: a same-origin JSON POST. */
const confirm = (url: string, body: unknown = {}) => http("POST", local(url), body, { "sec-fetch-site": "same-origin", origin: gw.url })
const stepOf = async (taskId: string) => ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body as { step: { id: string } | null }).step?.id

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "waiting-links-"))
  receiver = await startReceiver()
  gw = await startBuilt(env({ SVC_DATABASE_URL: `file:${join(dir, "with.db")}`, SVC_PUBLIC_URL: PUBLIC }))
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  await receiver?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("task.waiting carries decision links", () => {
  it("a pair per named person (not the group), deciding as that person under assignment and four-eyes", async () => {
    const sub = await subscribe(gw, "/people")
    const before = Date.now()
    const taskId = await newTask(gw)
    const first = await waitingAt("/people", sub.secret, taskId, "controller_approval")
    const links = first.data.links!
    expect(links.map((l) => l.actor)).toEqual(["ann@acme.example", "Bob@Acme.example"])
    for (const l of links) {
      expect(l.approveUrl).not.toBe(l.rejectUrl)
      expect(Date.parse(l.expiresAt) - before).toBeGreaterThanOrEqual(72 * 3600_000 - 1000)
      expect(Date.parse(l.expiresAt) - before).toBeLessThanOrEqual(72 * 3600_000 + 60_000)
    }
    expect(new Set(links.flatMap((l) => [l.approveUrl, l.rejectUrl])).size).toBe(4)

    // Someone not assigned is refused at the API; opening Bob's page changes nothing.
    const dave = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, { "x-forwarded-email": "dave@acme.example" })
    expect(dave.status).toBe(403)
    const bob = links.find((l) => l.actor === "Bob@Acme.example")!
    expect((await http("GET", local(bob.approveUrl))).status).toBe(200)
    expect((await http("HEAD", local(bob.approveUrl))).status).toBe(200)
    expect(await stepOf(taskId)).toBe("controller_approval")

    // Bob's approve page's POST decides, as Bob.
    const decided = await confirm(bob.approveUrl, { comments: "Payees checked" })
    expect(decided.status, decided.text).toBe(200)
    expect(decided.body).toMatchObject({ decision: "approved", actor: "Bob@Acme.example", stepId: "controller_approval" })
    expect(await stepOf(taskId)).toBe("cfo_approval")
    const events = (await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ type: string; payload: any }>
    expect(events.find((e) => e.type === "step.completed")!.payload).toMatchObject({ actor: "Bob@Acme.example", via: "link" })
    // Ann's pair named a step that has moved on.
    expect((await confirm(links[0]!.approveUrl)).status).toBe(409)

    // The four-eyes step: Ann, Bob and Carol (named twice, one pair). Bob decided before: his
    // link is refused by four-eyes; Dave's (made by an operator) by assignment.
    const second = await waitingAt("/people", sub.secret, taskId, "cfo_approval")
    expect(second.data.links!.map((l) => l.actor)).toEqual(["ann@acme.example", "bob@acme.example", "carol@acme.example"])
    const bobAgain = await confirm(second.data.links![1]!.approveUrl)
    expect(bobAgain.status).toBe(403)
    expect(bobAgain.body.message).toMatch(/four-eyes/)
    const made = await http("POST", `${gw.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId, actor: "dave@acme.example" }, {
      authorization: `Bearer ${TOKEN}`
    })
    expect(made.status, made.text).toBe(201)
    const daveLink = await confirm(made.body.approveUrl)
    expect(daveLink.status).toBe(403)
    expect(daveLink.body.message).toMatch(/dave@acme\.example is not assigned/)
    expect(await stepOf(taskId)).toBe("cfo_approval")
    const carol = second.data.links!.find((l) => l.actor === "carol@acme.example")!
    expect((await confirm(carol.rejectUrl, { comments: "Wrong period" })).status).toBe(200)
  })

  it("a step waiting for a group only carries no links", async () => {
    const sub = await subscribe(gw, "/groups")
    const taskId = await newTask(gw)
    const first = await waitingAt("/groups", sub.secret, taskId, "controller_approval")
    const ann = first.data.links!.find((l) => l.actor === "ann@acme.example")!
    expect((await confirm(ann.approveUrl)).status).toBe(200)
    const second = await waitingAt("/groups", sub.secret, taskId, "cfo_approval")
    const carol = second.data.links!.find((l) => l.actor === "carol@acme.example")!
    expect((await confirm(carol.approveUrl)).status).toBe(200)
    const board = await waitingAt("/groups", sub.secret, taskId, "board_approval")
    expect(board.data.assignees).toEqual(["group:board"])
    expect(board.data).not.toHaveProperty("links")
  })

  it("a retried delivery carries the same links, byte for byte", async () => {
    receiver.answer("/flaky", (n) => ({ status: n < 2 ? 503 : 204 }))
    const sub = await subscribe(gw, "/flaky")
    const taskId = await newTask(gw)
    const got = await receiver.waitFor("/flaky", 3, 15_000, (r) => (JSON.parse(r.body) as Waiting).data.taskId === taskId)
    expect(new Set(got.map((r) => r.headers["webhook-id"])).size).toBe(1)
    expect(new Set(got.map((r) => r.body)).size).toBe(1)
    expect(verify(sub.secret, got[2]!).data.links).toHaveLength(2)
    // The links of the failed attempts are the ones that work.
    const links = verify(sub.secret, got[0]!).data.links!
    expect((await confirm(links[1]!.approveUrl)).status).toBe(200)
  })
})

describe("links are made at the first attempt, for the step then current", () => {
  it("a step decided before its task.waiting was first sent gets no links", async () => {
    // task.created is the chain's head: while it fails, task.waiting waits behind it.
    receiver.answer("/late", (n) => ({ status: n < 2 ? 503 : 204 }))
    const res = await http("POST", `${gw.adminUrl}/workspace/webhooks`, {
      tenant: "acme",
      url: receiver.url("/late"),
      events: ["task.created", "task.waiting"]
    }, { authorization: `Bearer ${TOKEN}` })
    expect(res.status, res.text).toBe(201)
    const taskId = await newTask(gw)
    const decided = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, { "x-forwarded-email": "ann@acme.example" })
    expect(decided.status, decided.text).toBe(200)
    const [r] = await receiver.waitFor("/late", 1, 15_000, (r) => {
      const e = JSON.parse(r.body) as Waiting
      return e.type === "task.waiting" && e.data.taskId === taskId && e.data.stepId === "controller_approval"
    })
    expect(receiver.received("/late").filter((x) => x.body.includes('"task.created"')).length).toBeGreaterThanOrEqual(3)
    expect(verify(res.body.secret, r!).data).not.toHaveProperty("links")
    // The step now current does get its links.
    const next = await waitingAt("/late", res.body.secret, taskId, "cfo_approval")
    expect(next.data.links!.map((l) => l.actor)).toEqual(["ann@acme.example", "bob@acme.example", "carol@acme.example"])
  })
})

describe("several tenants' gateways on one database", () => {
  it("another tenant's task.waiting carries links under its own gateway's public URL, even when this gateway wrote it", async () => {
    const PUBLIC_GLOBEX = "https://approvals.example.test/globex"
    const globex = await startGlobexGateway(PUBLIC_GLOBEX)
    try {
      const sub = await subscribe(gw, "/globex", "globex")
      // Written by the acme gateway's process (its admin listener), whose deliverer wakes first.
      const taskId = await newGlobexTaskViaAcme()
      const waiting = await waitingAt("/globex", sub.secret, taskId, "controller_approval")
      const links = waiting.data.links!
      expect(links.map((l) => l.actor)).toEqual(["ann@acme.example", "Bob@Acme.example"])
      for (const l of links) expect(l.approveUrl.startsWith(`${PUBLIC_GLOBEX}/links/`)).toBe(true)
      // And they work there.
      const url = globex.url + links[0]!.approveUrl.slice(PUBLIC_GLOBEX.length)
      const decided = await http("POST", url, {}, { "sec-fetch-site": "same-origin", origin: globex.url })
      expect(decided.status, decided.text).toBe(200)
    } finally {
      await globex.stop()
    }
  }, 60_000)
})

describe("several tenants' gateways on one database, retries", () => {
  it("every attempt of a task.waiting sends its first body, with its own tenant's console URL, whichever gateway retries it", async () => {
    // Before: the console URL was added at send time from the sender's SVC_PUBLIC_URL, so a retry
    // the acme gateway took sent acme's address for a globex task (4 of 12 webhook-ids went out
    // with two bodies in an attack pass).
    const PUBLIC_GLOBEX = "https://approvals.example.test/globex-retries"
    const globex = await startGlobexGateway(PUBLIC_GLOBEX)
    try {
      // Each message's first attempt fails; globex's gateway makes them (acme's leaves another
      // tenant's new task.waiting to it), then stops, so acme's gateway makes every retry.
      receiver.answer("/globex-retries", (n) => {
        const id = receiver.received("/globex-retries")[n]!.headers["webhook-id"]
        return { status: receiver.received("/globex-retries").findIndex((r) => r.headers["webhook-id"] === id) === n ? 503 : 204 }
      })
      const sub = await subscribe(gw, "/globex-retries", "globex")
      const TASKS = 6
      const taskIds = await Promise.all(Array.from({ length: TASKS }, () => newGlobexTaskViaAcme()))
      const ofTasks = (r: Received) => taskIds.includes((JSON.parse(r.body) as Waiting).data.taskId)
      await receiver.waitFor("/globex-retries", TASKS, 30_000, ofTasks)
      await globex.stop()
      const attempts = await receiver.waitFor("/globex-retries", 2 * TASKS, 30_000, ofTasks)
      const byId = new Map<string, Set<string>>()
      for (const r of attempts) {
        const id = String(r.headers["webhook-id"])
        byId.set(id, (byId.get(id) ?? new Set()).add(r.body))
        const data = verify(sub.secret, r).data as Waiting["data"] & { consoleUrl?: string }
        expect(data.consoleUrl, r.body).toBe(`${PUBLIC_GLOBEX}/#/tasks/${data.taskId}`)
      }
      expect(byId.size).toBe(TASKS)
      for (const [id, bodies] of byId) expect(bodies.size, id).toBe(1)
    } finally {
      await globex.stop()
    }
  }, 90_000)
})

describe("without SVC_PUBLIC_URL", () => {
  it("no link is made: task.waiting carries no links field", async () => {
    const bare = await startBuilt(env({ SVC_DATABASE_URL: `file:${join(dir, "without.db")}` }))
    try {
      const sub = await subscribe(bare, "/bare")
      const taskId = await newTask(bare)
      const waiting = await waitingAt("/bare", sub.secret, taskId, "controller_approval")
      expect(waiting.data.assignees).toEqual(["ann@acme.example", "group:finance", "Bob@Acme.example"])
      expect(waiting.data).not.toHaveProperty("links")
      await until("the delivery logged", async () => {
        const res = await http("GET", `${bare.adminUrl}/workspace/webhooks/${sub.id}/deliveries?tenant=acme`, undefined, {
          authorization: `Bearer ${TOKEN}`
        })
        return res.body.length > 0 ? res.body : undefined
      })
    } finally {
      await bare.stop()
    }
  }, 60_000)
})
