/**
 * On the built process: no client-chosen `seq` can stop a task. The highest
 * seq a client may post is the `maximum` the OpenAPI document publishes for TaskEventDto.seq;
 * a task whose timeline holds that seq still moves (upload, two approvals, COMPLETED) with the
 * engine's events after it. Before the cap (maximum 2^53-1) the engine's next seq could not be
 * represented: every delivery collided, the task stayed at its first step for good. Since the
 * timeline has positions the gateway's events take no producer seq at all (they read with seq =
 * their position), so no seq a client posts, at any moment, can refuse or stall a decision.
 */
import { afterAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

/** The demo's expense review at upload_receipts (FILE_UPLOAD), then review_expenses, then sign_off. */
const TASK = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
/** At review_expenses, events 1..3 seeded. */
const OTHER_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

const dirs: Array<string> = []
const services: Array<RunningService> = []
afterAll(async () => {
  await Promise.all(services.map((s) => s.stop()))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const start = async () => {
  const dir = mkdtempSync(join(tmpdir(), "seq-cap-"))
  dirs.push(dir)
  const service = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "off" })
  services.push(service)
  return service
}

const note = (seq: number) => ({ type: "note", source: "worker", seq, payload: { seq } })

const status = async (url: string) => (await http("GET", `${url}/v1/tasks/${TASK}/ui`)).body.task.status as string

describe("a client-chosen seq cannot stop a task (built process)", () => {
  it("the published cap is refused past it with a 400 naming seq; a timeline at the cap still completes", async () => {
    const gw = await start()
    const openapi = await http("GET", `${gw.url}/openapi.json`)
    const cap = openapi.body.components.schemas.TaskEventDto.properties.seq.maximum as number
    expect(Number.isSafeInteger(cap)).toBe(true)

    const events = `${gw.url}/v1/tasks/${TASK}/events`
    for (const past of [cap + 1, Number.MAX_SAFE_INTEGER, 2 ** 53, 1e300]) {
      if (past <= cap) continue
      const res = await http("POST", events, note(past))
      expect(res.status, `seq ${past}`).toBe(400)
      expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
      expect(res.body.message).toMatch(/\bseq\b/)
      expect(res.body.message).toContain(String(cap))
    }
    // The cap itself is a valid seq.
    const atCap = await http("POST", events, note(cap))
    expect(atCap.status).toBe(200)
    expect(atCap.body.event.seq).toBe(cap)

    // Drive the task: a file for upload_receipts, then the two approvals.
    const ingest = await http("POST", `${gw.url}/v1/tasks/${TASK}/files/ingest`, {
      source: "receipts",
      fileName: "receipt.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50 USD").toString("base64") },
      signalTaskId: TASK,
      signalName: "file_submitted"
    })
    expect(ingest.status).toBe(201)
    for (const step of ["review_expenses", "sign_off"]) {
      await waitFor(`task ${TASK} to reach ${step}`, async () => (await http("GET", `${gw.url}/v1/tasks/${TASK}/ui`)).body.step?.id === step, {
        timeoutMs: 5000,
        everyMs: 50
      })
      expect((await http("GET", `${gw.url}/v1/tasks/${TASK}/ui`)).body.step?.id, "the task moved on").toBe(step)
      const approved = await http("POST", `${gw.url}/v1/tasks/${TASK}/action`, { type: "approved" })
      expect(approved.status).toBe(200)
    }
    const until = Date.now() + 5000
    while ((await status(gw.url)) !== "COMPLETED" && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    expect(await status(gw.url)).toBe("COMPLETED")

    // The engine's events follow the cap, in order, as the gateway's records.
    const timeline = (await http("GET", events)).body.events as Array<{ seq: number; source: string; type: string; position: string; origin: string }>
    const engine = timeline.filter((e) => e.source === "workspace")
    // Each step made current by a decision says whom it waits for (task.waiting, the gateway's too).
    expect(engine.map((e) => e.type)).toEqual([
      "source.submitted",
      "step.completed",
      "task.waiting",
      "step.completed",
      "task.waiting",
      "step.completed",
      "task.status_changed"
    ])
    // After the cap's event (in the timeline's order): the upload's audit event (file.stored) first,
    // then the engine's; none takes a producer seq (before: cap + 1, cap + 2, ...): seq = position.
    const capAt = timeline.findIndex((e) => e.source === "worker" && e.seq === cap)
    expect(capAt).toBeGreaterThanOrEqual(0)
    const afterCap = timeline.slice(capAt + 1)
    expect(afterCap[0]).toMatchObject({ source: "audit", type: "file.stored" })
    expect(afterCap.filter((e) => e.source === "workspace")).toEqual(engine)
    for (const e of afterCap) expect([e.origin, e.seq]).toEqual(["gateway", Number(e.position)])
    // Below the cap the timeline still takes a client's events.
    const below = await http("POST", events, note(7))
    expect(below.status).toBe(200)
    expect(gw.output()).not.toMatch(/UNIQUE constraint failed/)
  }, 60_000)

  // Before: the engine took max+1, so a client racing to post that seq either won it or got a
  // 409. Now the engine takes no producer seq: every racer is stored, and the decision applies.
  it("a client posting any seq (those the old engine took next included), concurrently with decisions, is never refused and never stalls delivery", async () => {
    const gw = await start()
    const events = `${gw.url}/v1/tasks/${OTHER_TASK}/events`
    const before = (await http("GET", events)).body.events as Array<{ seq: number; position: string }>
    expect(before.map((e) => e.seq)).toEqual([1, 2, 3])
    // max+1.. (what the old engine took), and the numbers just past the last position (what the
    // engine's records read as their seq now).
    const last = Math.max(...before.map((e) => Number(e.position)))
    const raced = [4, 5, 6, last + 1, last + 2, last + 3]
    const approve = http("POST", `${gw.url}/v1/tasks/${OTHER_TASK}/action`, { type: "approved" })
    const racers = await Promise.all(raced.map((seq) => http("POST", events, note(seq))))
    expect((await approve).status).toBe(200)
    for (const r of racers) expect(r.status).toBe(200)
    let step: string | undefined
    await waitFor(`task ${OTHER_TASK} to reach sign_off`, async () =>
      (step = (await http("GET", `${gw.url}/v1/tasks/${OTHER_TASK}/ui`)).body.step?.id) === "sign_off", {
      timeoutMs: 5000,
      everyMs: 50,
      seen: () => `current step: ${step}`
    })
    expect(step).toBe("sign_off")
    const timeline = (await http("GET", events)).body.events as Array<{ seq: number; source: string; origin: string; position: string }>
    // Every event once; each racer's event stored as the producer's, at its seq.
    expect(new Set(timeline.map((e) => e.position)).size).toBe(timeline.length)
    expect(timeline.filter((e) => e.source === "worker").map((e) => e.seq).sort((a, b) => a - b)).toEqual([1, 2, 3, ...raced])
    const engine = timeline.filter((e) => e.source === "workspace")
    expect(engine.length).toBeGreaterThan(0)
    for (const e of engine) expect([e.origin, e.seq]).toEqual(["gateway", Number(e.position)])
    // The engine's number is not the producer's: posting it is stored, not a 409.
    const engineSeq = engine[0]!.seq
    const taken = await http("POST", events, note(engineSeq))
    expect(taken.status).toBe(200)
    expect(taken.body.event).toMatchObject({ seq: engineSeq, source: "worker", origin: "producer" })
    expect(taken.body.event.position).not.toBe(engine[0]!.position)
    // Within the producer's own seqs: the same event again answers the stored one, a different one is a 409.
    const again = await http("POST", events, note(engineSeq))
    expect(again.status).toBe(200)
    expect(again.body.event).toEqual(taken.body.event)
    const clash = await http("POST", events, { ...note(engineSeq), payload: { other: true } })
    expect(clash.status).toBe(409)
    expect(clash.body.message).toBe(`seq ${engineSeq} of source "worker" is already taken by a different event`)
    expect(gw.output()).not.toMatch(/delivery attempt \d+ failed/)
  }, 60_000)
})
