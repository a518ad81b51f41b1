/**
 * Who a step waits for, on the built process (README "Inbox and assignment"): with an identity at
 * the edge a step's assignees (actors, group:<name>, its agent) are the only ones who act on it
 * (403 naming them); a person takes over an agent's step only by claiming it with override;
 * four-eyes compares people after one normalization (look-alikes meet); actor values with
 * invisible characters, or a repeated actor header, are refused; without an identity, assignment
 * is shown and not enforced, and a groups header nobody configured names no groups.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const AGENT = "5f0c8e7a-3b1d-4c2e-9a6f-7d8e9f0a1b2c"

const dirs: Array<string> = []
const running: Array<RunningService> = []
const start = async (env: Record<string, string>) => {
  const dir = mkdtempSync(join(tmpdir(), "inbox-assignment-"))
  dirs.push(dir)
  const gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "w.db")}`, SVC_SEED_FILE: FIXTURE, SVC_TENANT_SLUG: "acme", ...env })
  running.push(gw)
  return gw
}

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Headers as the edge sends them: UTF-8 bytes one character each; groups when given. */
const as = (actor: string, groups?: string) => ({
  "x-forwarded-email": Buffer.from(actor, "utf8").toString("latin1"),
  ...(groups !== undefined ? { "x-forwarded-groups": groups } : {})
})

const newTask = async (gw: RunningService, workflowId = "close") => {
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId }, as("boss@acme.test"))
  expect(created.status).toBe(201)
  return created.body.id as string
}

const approve = (gw: RunningService, taskId: string, headers: Record<string, string>) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, headers)

const submitFile = (gw: RunningService, taskId: string, headers: Record<string, string>) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
    source: "recon",
    fileName: "recon.txt",
    fileRef: { provider: "inline_base64", data: Buffer.from("bank ok").toString("base64") },
    signalTaskId: taskId,
    signalName: "file_submitted"
  }, headers)

const stepOf = async (gw: RunningService, taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id

/** A request with raw header pairs (fetch joins a repeated header into one). */
const rawPost = (url: string, pairs: ReadonlyArray<readonly [string, string]>, body: unknown) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = request(url, {
      method: "POST",
      // Raw pairs: Node then adds no Host of its own.
      headers: ["host", new URL(url).host, ...pairs.flat(), "content-type", "application/json", "content-length", String(Buffer.byteLength(text))]
    }, (res) => {
      let data = ""
      res.on("data", (c) => (data += c))
      res.on("end", () => resolve({ status: res.statusCode!, body: data === "" ? undefined : JSON.parse(data) }))
    })
    req.on("error", reject)
    req.end(text)
  })

describe("assignment with an identity at the edge (SVC_ACTOR_HEADER, SVC_GROUPS_HEADER)", () => {
  let gw: RunningService
  beforeAll(async () => {
    gw = await start({ SVC_ACTOR_HEADER: "x-forwarded-email", SVC_GROUPS_HEADER: "x-forwarded-groups" })
  }, 60_000)

  it("someone not assigned gets 403 naming who the step waits for; an assignee (by name in any case, or by group) acts", async () => {
    const t1 = await newTask(gw)
    const refused = await approve(gw, t1, as("carol@acme.test"))
    expect(refused.status).toBe(403)
    expect(refused.body.message).toContain("waits for ann@acme.test, group:controllers")
    expect(refused.body.message).toContain("carol@acme.test is not assigned")
    expect(await stepOf(gw, t1)).toBe("prepare")
    // A group the edge names makes carol a controller.
    expect((await approve(gw, t1, as("carol@acme.test", "finance, controllers"))).status).toBe(200)
    const t2 = await newTask(gw)
    expect((await approve(gw, t2, as("ANN@acme.test"))).status).toBe(200)
    expect(await stepOf(gw, t2)).toBe("reconcile")
  })

  it("a person takes over an agent's step only by claiming it with override, recorded in the timeline", async () => {
    const t = await newTask(gw)
    expect((await approve(gw, t, as("ann@acme.test"))).status).toBe(200)
    const direct = await submitFile(gw, t, as("ann@acme.test"))
    expect(direct.status).toBe(403)
    expect(direct.body.message).toContain(`agent:${AGENT}`)
    const plain = await http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as("ann@acme.test"))
    expect(plain.status).toBe(403)
    const claimed = await http("POST", `${gw.url}/v1/tasks/${t}/claim`, { override: true }, as("ann@acme.test"))
    expect(claimed.status).toBe(200)
    expect(claimed.body).toMatchObject({ stepId: "reconcile", by: "ann@acme.test", override: true })
    // Someone else cannot use ann's override.
    expect((await submitFile(gw, t, as("bob@acme.test"))).status).toBe(403)
    expect((await submitFile(gw, t, as("ann@acme.test"))).status).toBe(201)
    expect(await stepOf(gw, t)).toBe("review")
    const events = (await http("GET", `${gw.url}/v1/tasks/${t}/events`)).body.events as Array<any>
    expect(events.find((e) => e.type === "step.claimed")).toMatchObject({
      source: "audit",
      payload: { stepId: "reconcile", holder: "ann@acme.test", override: true, actor: "ann@acme.test" }
    })
  })

  it("four-eyes: the earlier decider written with look-alikes is the same person; someone else decides", async () => {
    const t = await newTask(gw)
    expect((await approve(gw, t, as("ann@acme.test"))).status).toBe(200)
    await http("POST", `${gw.url}/v1/tasks/${t}/claim`, { override: true }, as("bob@acme.test"))
    expect((await submitFile(gw, t, as("bob@acme.test"))).status).toBe(201)
    expect(await stepOf(gw, t)).toBe("review")
    // Cyrillic а and о, full-width letters, a capital: each is ann or bob again.
    for (const lookalike of ["\u0430nn@acme.test", "ＡＮＮ@acme.test", "b\u043eb@acme.test", "Bob@acme.test", "ann@acme\uFF61test"]) {
      const refused = await approve(gw, t, as(lookalike, "reviewers"))
      expect(refused.status, lookalike).toBe(403)
      expect(refused.body.message).toContain("four-eyes")
    }
    expect(await stepOf(gw, t)).toBe("review")
    expect((await approve(gw, t, as("dan@acme.test", "reviewers"))).status).toBe(200)
    expect(await stepOf(gw, t)).toBe("sign_off")
  })

  it("actor values with invisible or format characters are refused (400), and so is a repeated actor header", async () => {
    const t = await newTask(gw)
    // variation selector 16, combining grapheme joiner, Braille blank, Hangul filler, zero-width joiner
    for (const hidden of ["ann\uFE0F@acme.test", "an\u034Fn@acme.test", "ann\u2800@acme.test", "ann\u3164@acme.test", "an\u200Dn@acme.test"]) {
      const refused = await approve(gw, t, as(hidden))
      expect(refused.status, JSON.stringify(hidden)).toBe(400)
      expect(refused.body.message).toContain("x-forwarded-email")
    }
    // One value naming two people (how an appending proxy joins a client's copy to its own).
    const joined = await approve(gw, t, as("carol@acme.test, ann@acme.test"))
    expect(joined.status).toBe(400)
    expect(joined.body.message).toMatch(/x-forwarded-email: the actor holds a comma/)
    const twice = await rawPost(`${gw.url}/v1/tasks/${t}/action`, [["x-forwarded-email", "carol@acme.test"], ["x-forwarded-email", "ann@acme.test"]], {
      type: "approved"
    })
    expect(twice.status).toBe(400)
    expect(twice.body.message).toContain("more than once")
    const groupsTwice = await rawPost(`${gw.url}/v1/tasks/${t}/action`, [
      ["x-forwarded-email", "carol@acme.test"],
      ["x-forwarded-groups", "finance"],
      ["x-forwarded-groups", "controllers"]
    ], { type: "approved" })
    expect(groupsTwice.status).toBe(400)
    expect(await stepOf(gw, t)).toBe("prepare")
  })

  it("requireClaim: only the claim's holder acts; a second claimant gets 409 naming the holder; the holder releases", async () => {
    const t = await newTask(gw)
    expect((await approve(gw, t, as("ann@acme.test"))).status).toBe(200)
    await http("POST", `${gw.url}/v1/tasks/${t}/claim`, { override: true }, as("carol@acme.test"))
    expect((await submitFile(gw, t, as("carol@acme.test"))).status).toBe(201)
    expect((await approve(gw, t, as("dan@acme.test", "reviewers"))).status).toBe(200)
    expect(await stepOf(gw, t)).toBe("sign_off")
    const unclaimed = await approve(gw, t, as("bob@acme.test"))
    expect(unclaimed.status).toBe(403)
    expect(unclaimed.body.message).toContain("must be claimed")
    expect((await http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as("bob@acme.test"))).status).toBe(200)
    const second = await http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as("ann@acme.test"))
    expect(second.status).toBe(409)
    expect(second.body.message).toContain("claimed by bob@acme.test")
    expect((await approve(gw, t, as("ann@acme.test"))).status).toBe(403)
    expect((await http("DELETE", `${gw.url}/v1/tasks/${t}/claim`, undefined, as("ann@acme.test"))).status).toBe(403)
    expect((await http("DELETE", `${gw.url}/v1/tasks/${t}/claim`, undefined, as("bob@acme.test"))).status).toBe(204)
    expect((await http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as("ann@acme.test"))).status).toBe(200)
    expect((await approve(gw, t, as("ann@acme.test"))).status).toBe(200)
    expect((await http("GET", `${gw.url}/v1/tasks/${t}/ui`)).body.task.status).toBe("COMPLETED")
  })

  it("claims racing: of ten people claiming one step at once, one holds it and nine hear who", async () => {
    const t = await newTask(gw)
    const people = Array.from({ length: 10 }, (_, i) => `p${i}@acme.test`)
    const answers = await Promise.all(people.map((p) => http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as(p, "controllers"))))
    const won = answers.filter((a) => a.status === 200)
    expect(won).toHaveLength(1)
    const holder = won[0]!.body.by
    for (const a of answers.filter((a) => a.status !== 200)) {
      expect(a.status).toBe(409)
      expect(a.body.message).toContain(`claimed by ${holder}`)
    }
  })

  it("a step becoming current writes task.waiting with who it waits for and when it is due", async () => {
    const before = Date.now()
    const t = await newTask(gw)
    await approve(gw, t, as("ann@acme.test"))
    const waiting = ((await http("GET", `${gw.url}/v1/tasks/${t}/events`)).body.events as Array<any>).filter((e) => e.type === "task.waiting")
    expect(waiting.map((e) => e.payload)).toEqual([
      {
        stepId: "prepare",
        title: "Prepare the close",
        component: "APPROVAL",
        assignees: ["ann@acme.test", "group:controllers"],
        dueAt: expect.any(String)
      },
      { stepId: "reconcile", title: "Reconcile the bank", component: "FILE_UPLOAD", assignees: [], agentId: AGENT }
    ])
    const dueAt = Date.parse(waiting[0].payload.dueAt)
    expect(dueAt - before).toBeGreaterThanOrEqual(3_600_000 - 1_000)
    expect(dueAt - Date.now()).toBeLessThanOrEqual(3_600_000)
  })
})

describe("without an identity, assignment is shown and not enforced", () => {
  let gw: RunningService
  beforeAll(async () => {
    gw = await start({})
  }, 60_000)

  it("anyone decides an assigned step; headers naming people or groups are not read", async () => {
    const t = await newTask(gw)
    expect((await approve(gw, t, as("carol@acme.test", "controllers"))).status).toBe(200)
    // Nobody is named here: assignee=me matches no one, and says so (before: an empty page).
    const inbox = await http("GET", `${gw.url}/v1/inbox?assignee=me`, undefined, as("ann@acme.test", "controllers"))
    expect(inbox.status).toBe(400)
    expect(inbox.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
    expect(inbox.body.message).toBe(
      `assignee: "me" matches nobody: this request names no one (no identity is configured at the edge: ` +
        `SVC_ACTOR_HEADER or SVC_JWT_JWKS); name an actor or group:<name>, or leave assignee out`
    )
    expect((await http("GET", `${gw.url}/v1/inbox?assignee=ann@acme.test`)).body.items.length).toBeGreaterThan(0)
  })

  it("with the actor header but no SVC_GROUPS_HEADER, a groups header a client sends names no groups", async () => {
    const gw2 = await start({ SVC_ACTOR_HEADER: "x-forwarded-email" })
    const t = await newTask(gw2)
    expect((await approve(gw2, t, as("carol@acme.test", "controllers"))).status).toBe(403)
  }, 60_000)
})
