/**
 * GET /v1/inbox on the built process (README "Inbox and assignment"): every waiting step of the
 * tenant's running tasks across entities, oldest waiting first, with its filters; cursor paging
 * that covers each waiting step once while tasks move; cursors of other queries refused; another
 * tenant's tasks never shown.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const ACME_UK = "3acc7ce9-d0bf-431a-9528-aa340456a628"
const GLOBEX_US = "40b0f59f-adbf-4d1b-ba2a-434dde6e06ec"
const LATE_TASK = "11111111-1111-4111-8111-111111111111"
const GLOBEX_TASK = "22222222-2222-4222-8222-222222222222"

let dir: string
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "inbox-"))
  gw = await startBuilt({
    SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
    SVC_SEED_FILE: FIXTURE,
    SVC_TENANT_SLUG: "acme",
    SVC_ACTOR_HEADER: "x-forwarded-email",
    SVC_GROUPS_HEADER: "x-forwarded-groups"
  })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const as = (actor: string, groups?: string) => ({
  "x-forwarded-email": actor,
  ...(groups !== undefined ? { "x-forwarded-groups": groups } : {})
})

const newTask = async (entityId: string, workflowId: string) => {
  const created = await http("POST", `${gw.url}/v1/entities/${entityId}/tasks`, { workflowId }, as("boss@acme.test"))
  expect(created.status).toBe(201)
  return created.body.id as string
}

const inbox = async (query: string, headers: Record<string, string> = {}) => {
  const answer = await http("GET", `${gw.url}/v1/inbox${query}`, undefined, headers)
  expect(answer.status, answer.text).toBe(200)
  return answer.body as { items: Array<any>; nextCursor?: string }
}

const approve = (taskId: string, actor: string, groups?: string) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, as(actor, groups))

describe("GET /v1/inbox", () => {
  let usClose: string
  let ukOpen: string
  beforeAll(async () => {
    usClose = await newTask(ACME_US, "close")
    ukOpen = await newTask(ACME_UK, "open")
  })

  it("lists every waiting step of the tenant across entities, oldest waiting first, with entity, step, due and assignees", async () => {
    const { items } = await inbox("", as("carol@acme.test"))
    const ids = items.map((i) => i.task.id)
    expect(ids[0]).toBe(LATE_TASK)
    expect(ids).toContain(usClose)
    expect(ids).toContain(ukOpen)
    expect(ids).not.toContain(GLOBEX_TASK)
    const since = items.map((i) => i.waitingSince)
    expect([...since].sort()).toEqual(since)
    expect(items[0]).toMatchObject({
      entity: { id: ACME_UK, name: "Acme UK" },
      step: { id: "prepare", title: "Prepare the close", component: "APPROVAL" },
      waitingSince: "2026-01-01T00:00:00.000Z",
      dueAt: "2026-01-01T01:00:00.000Z",
      overdue: true,
      assignees: ["ann@acme.test", "group:controllers"],
      requireClaim: false,
      mayAct: false
    })
    expect(items.find((i) => i.task.id === ukOpen)).toMatchObject({ assignees: [], mayAct: true })
  })

  it("filters: assignee (me with groups, or named), awaiting, entityId, workflowId, overdue", async () => {
    const mine = await inbox("?assignee=me", as("carol@acme.test", "controllers"))
    expect(mine.items.map((i) => i.task.id).sort()).toEqual([LATE_TASK, usClose].sort())
    expect(mine.items.every((i) => i.mayAct)).toBe(true)
    expect((await inbox("?assignee=me", as("carol@acme.test"))).items).toEqual([])
    expect((await inbox("?assignee=ann@acme.test")).items.map((i) => i.task.id).sort()).toEqual([LATE_TASK, usClose].sort())
    expect((await inbox("?assignee=group:controllers")).items).toHaveLength(2)
    // The group: prefix in any case, as names are compared (before: 400 "starts with \"group:\"").
    for (const q of ["GROUP:CONTROLLERS", "Group:controllers"]) {
      expect((await inbox(`?assignee=${q}`)).items.map((i) => i.task.id).sort(), q).toEqual([LATE_TASK, usClose].sort())
    }
    expect((await inbox("?awaiting=FILE_UPLOAD")).items).toEqual([])
    expect((await inbox(`?entityId=${ACME_UK}`)).items.map((i) => i.task.id).sort()).toEqual([LATE_TASK, ukOpen].sort())
    expect((await inbox("?workflowId=open")).items.map((i) => i.task.id)).toEqual([ukOpen])
    expect((await inbox("?overdue=true")).items.map((i) => i.task.id)).toEqual([LATE_TASK])
    // Another tenant's entity names nothing here.
    expect((await inbox(`?entityId=${GLOBEX_US}`)).items).toEqual([])
  })

  it("assignee=me from a request that names nobody is a 400 saying so; groups without a person are nobody's, in /v1/me too", async () => {
    for (const headers of [{}, { "x-forwarded-groups": "controllers" }]) {
      const answer = await http("GET", `${gw.url}/v1/inbox?assignee=me`, undefined, headers)
      // Before: 200 with an empty page ("Nothing waits here." in the CLI).
      expect(answer.status, JSON.stringify(headers)).toBe(400)
      expect(answer.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
      expect(answer.body.message).toBe(
        `assignee: "me" matches nobody: this request names no one (the edge names a person in header x-forwarded-email); ` +
          "name an actor or group:<name>, or leave assignee out"
      )
    }
    // /v1/me is what assignee=me matches: with no actor, no groups either (before: ["controllers"]).
    const me = await http("GET", `${gw.url}/v1/me`, undefined, { "x-forwarded-groups": "controllers" })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ actor: null, groups: [], identity: "edge" })
    expect((await http("GET", `${gw.url}/v1/me`, undefined, as("carol@acme.test", "controllers"))).body)
      .toMatchObject({ actor: "carol@acme.test", groups: ["controllers"], identity: "edge" })
  })

  it("assignee's length counts characters (code points), as an actor's does: 256 emoji fit, 257 are refused naming 257", async () => {
    // Before: 256 emoji (512 UTF-16 units) were refused as "512 characters long".
    for (const q of ["😀".repeat(256), `group:${"😀".repeat(256)}`]) {
      expect((await inbox(`?assignee=${encodeURIComponent(q)}`)).items).toEqual([])
    }
    const over = await http("GET", `${gw.url}/v1/inbox?assignee=${encodeURIComponent("😀".repeat(257))}`)
    expect(over.status).toBe(400)
    expect(over.body.message).toBe("assignee: is 257 characters long; at most 256 are accepted")
  })

  it("bad filters and cursors are 400s naming the parameter; a cursor of another query is refused", async () => {
    for (const q of ["?limit=0", "?limit=201", "?overdue=yes", "?entityId=nope", "?cursor=%2F%2F", "?cursor=abc"]) {
      const answer = await http("GET", `${gw.url}/v1/inbox${q}`)
      expect(answer.status, q).toBe(400)
    }
    const first = await inbox("?limit=1")
    expect(first.nextCursor).toBeDefined()
    const other = await http("GET", `${gw.url}/v1/inbox?limit=1&entityId=${ACME_US}&cursor=${first.nextCursor}`)
    expect(other.status).toBe(400)
    expect(other.body.message).toContain("cursor")
  })

  it("pages cover every waiting step once while tasks move on", async () => {
    const tasks: Array<string> = []
    for (let i = 0; i < 9; i++) tasks.push(await newTask(i % 2 === 0 ? ACME_US : ACME_UK, "close"))
    const seen: Array<string> = []
    let cursor: string | undefined
    let pages = 0
    const moved = new Set<string>()
    do {
      const page = await inbox(`?limit=3${cursor !== undefined ? `&cursor=${cursor}` : ""}`)
      seen.push(...page.items.map((i) => `${i.task.id}/${i.step.id}`))
      cursor = page.nextCursor
      // Between pages, move on one task already listed and one not yet listed.
      if (pages === 1) {
        for (const t of [tasks[0]!, tasks[8]!]) {
          expect((await approve(t, "ann@acme.test")).status).toBe(200)
          moved.add(t)
        }
      }
      pages++
    } while (cursor !== undefined && pages < 20)
    expect(cursor).toBeUndefined()
    expect(new Set(seen).size).toBe(seen.length)
    for (const t of tasks.filter((t) => !moved.has(t))) expect(seen).toContain(`${t}/prepare`)
    // A moved task's new step became current after every cursor so far: it is listed, once.
    for (const t of moved) expect(seen).toContain(`${t}/reconcile`)
    expect(seen).toContain(`${tasks[0]}/prepare`)
    expect(seen).not.toContain(`${tasks[8]}/prepare`)
  })

  it("a claim shows in the inbox, and the step moving on releases it", async () => {
    const t = await newTask(ACME_US, "close")
    expect((await http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, as("ann@acme.test"))).status).toBe(200)
    const item = (await inbox(`?entityId=${ACME_US}&assignee=ann@acme.test&limit=200`)).items.find((i) => i.task.id === t)
    expect(item.claim).toMatchObject({ stepId: "prepare", by: "ann@acme.test", override: false })
    expect((await approve(t, "ann@acme.test")).status).toBe(200)
    const after = (await inbox(`?entityId=${ACME_US}&limit=200`)).items.find((i) => i.task.id === t)
    expect(after.step.id).toBe("reconcile")
    expect(after.claim).toBeUndefined()
  })

  it("a claim and a release sent again with their Idempotency-Key get the first answer and write nothing; the key is its caller's", async () => {
    const t = await newTask(ACME_US, "close")
    const claim = (key: string, headers: Record<string, string>) =>
      http("POST", `${gw.url}/v1/tasks/${t}/claim`, {}, { ...headers, "idempotency-key": key })
    const release = (key: string, headers: Record<string, string>) =>
      http("DELETE", `${gw.url}/v1/tasks/${t}/claim`, undefined, { ...headers, "idempotency-key": key })
    const claimOf = async () => (await inbox(`?entityId=${ACME_US}&limit=200`)).items.find((i) => i.task.id === t).claim
    const first = await claim("k1", as("ann@acme.test"))
    expect(first.status).toBe(200)
    expect((await release("k2", as("ann@acme.test"))).status).toBe(204)
    // The claim's retry: its first answer, no new claim (before: a new one at a later time).
    const again = await claim("k1", as("ann@acme.test"))
    expect(again.status).toBe(200)
    expect(again.body).toEqual(first.body)
    expect(await claimOf()).toBeUndefined()
    // Ann claims again (a new key): the release's retry leaves that claim alone.
    const held = await claim(`fresh-${t}`, as("ann@acme.test"))
    expect((await release("k2", as("ann@acme.test"))).status).toBe(204)
    expect(await claimOf()).toEqual(held.body)
    // Ann's key sent by Bob (a controller, who may claim): the key reused, not the claim's conflict.
    const bob = await claim("k1", as("bob@acme.test", "controllers"))
    expect(bob.status).toBe(409)
    expect(bob.body).toMatchObject({ statusCode: 409, error: "Conflict" })
    expect(bob.body.message).toContain(`Idempotency-Key "k1" was already used for a different request`)
    const events = (await http("GET", `${gw.url}/v1/tasks/${t}/events`)).body.events as Array<{ type: string }>
    expect(events.filter((e) => e.type === "step.claimed" || e.type === "step.released").map((e) => e.type))
      .toEqual(["step.claimed", "step.released", "step.claimed"])
  })
})
