/**
 * Decisions written together on a SEEDED task (a fixture's, as the demo data's), on the built
 * process: a seeded task was stored with no step history, so the first move wrote the next step as
 * its only entry, and a decision that had arrived before that move was read as one on the step
 * after. Two people's decisions written together both answered 200 and moved the task two steps
 * (an approval and a rejection: approved by one, the CFO's step rejected by the other; found in 5
 * of 40 tasks by the attack pass). Now every seeded task's history starts with its first step, and
 * a task without one (a database seeded before) gets the step it leaves on its first move. A
 * damaged history (`null`, text that is no JSON) reads as none: it answered every decision 500.
 */
import { createClient } from "@libsql/client"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { lastWriteSpreadMs, type RawResponse, sendTogether } from "../support/together.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { ACME_TASKS, acmeTask, linksWorld } from "../links/world.js"

const HEADER = "x-forwarded-email"
/** A round this process could not write within this many ms did not send them together: run again. */
const TOGETHER_MS = 2

let gw: BuiltGateway
beforeAll(async () => {
  // The links tests' world, with ten more tasks at controller_approval for the last two tests.
  const world = linksWorld()
  const first = world.tasks.find((t) => t.id === acmeTask(0))!
  for (let i = 0; i < 10; i++) world.tasks.push({ ...first, id: acmeTask(ACME_TASKS + i), title: `Payment run ${ACME_TASKS + i}` })
  gw = await startBuiltGateway({ SVC_ACTOR_HEADER: HEADER, SVC_ADMIN_PORT: "off" }, world)
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const decide = (taskId: string, type: "approved" | "rejected", who: string) => ({
  method: "POST",
  path: `/v1/tasks/${taskId}/action`,
  body: { type, comments: `${who} says ${type}` },
  headers: { [HEADER]: who }
})

const stateOf = async (taskId: string) => {
  const snapshots = (await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body as Record<string, unknown>
  const ui = (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body as { task: { status: string }; step?: { id: string } | null }
  return { status: ui.task.status, step: ui.step?.id ?? null, decided: Object.keys(snapshots).sort() }
}

const shown = (answers: ReadonlyArray<RawResponse>) => answers.map((a) => `${a.status} ${a.text}`).join(" | ")

describe("decisions written together on seeded tasks (built process)", () => {
  it("two people's opposite decisions: one applies to the step both saw, the other is a 409; never the next step decided", async () => {
    let rounds = 0
    for (let i = 0; i < ACME_TASKS / 2; i++) {
      const taskId = acmeTask(i)
      const [first, second] = i % 2 === 0 ? ["approved", "rejected"] as const : ["rejected", "approved"] as const
      const answers = await sendTogether(gw.url, [decide(taskId, first, "bob@acme.test"), decide(taskId, second, "carl@acme.test")])
      if (lastWriteSpreadMs > TOGETHER_MS) continue
      rounds++
      expect(answers.map((a) => a.status).sort(), `task ${i}: ${shown(answers)}`).toEqual([200, 409])
      const won = answers[0]!.status === 200 ? first : second
      expect(await stateOf(taskId), `task ${i}: ${shown(answers)}`).toEqual(
        won === "approved"
          ? { status: "IN_PROGRESS", step: "cfo_approval", decided: ["controller_approval"] }
          : { status: "FAILED", step: null, decided: ["controller_approval"] }
      )
    }
    expect(rounds).toBeGreaterThan(0)
  }, 120_000)

  it("two people's identical approvals: both {ok:true}, the task moves one step", async () => {
    let rounds = 0
    for (let i = ACME_TASKS / 2; i < ACME_TASKS; i++) {
      const taskId = acmeTask(i)
      const answers = await sendTogether(gw.url, [decide(taskId, "approved", "bob@acme.test"), decide(taskId, "approved", "carl@acme.test")])
      if (lastWriteSpreadMs > TOGETHER_MS) continue
      rounds++
      expect(answers.map((a) => `${a.status} ${a.text}`), `task ${i}`).toEqual([`200 {"ok":true}`, `200 {"ok":true}`])
      expect(await stateOf(taskId), `task ${i}: ${shown(answers)}`).toEqual({
        status: "IN_PROGRESS",
        step: "cfo_approval",
        decided: ["controller_approval"]
      })
    }
    expect(rounds).toBeGreaterThan(0)
  }, 120_000)

  it("a task stored without a history (a database seeded by an earlier version): its first move keeps the step it leaves", async () => {
    // As an earlier version seeded them: no history at all.
    const db = createClient({ url: pathToFileURL(gw.dbFile).href })
    const ids = Array.from({ length: 6 }, (_, i) => acmeTask(ACME_TASKS + i))
    try {
      for (const id of ids) await db.execute({ sql: "UPDATE tasks SET step_history = '[]' WHERE id = ?", args: [id] })
    } finally {
      db.close()
    }
    let rounds = 0
    for (const taskId of ids) {
      const answers = await sendTogether(gw.url, [decide(taskId, "approved", "bob@acme.test"), decide(taskId, "rejected", "carl@acme.test")])
      if (lastWriteSpreadMs > TOGETHER_MS) continue
      rounds++
      expect(answers.map((a) => a.status).sort(), shown(answers)).toEqual([200, 409])
      expect((await stateOf(taskId)).decided, shown(answers)).toEqual(["controller_approval"])
    }
    expect(rounds).toBeGreaterThan(0)
  }, 120_000)

  it("a damaged history reads as none: decisions are answered and applied, never a 500", async () => {
    const damaged = ["null", "[null]", "not json", "\"abc\""]
    const ids = damaged.map((_, i) => acmeTask(ACME_TASKS + 6 + i))
    const db = createClient({ url: pathToFileURL(gw.dbFile).href })
    try {
      for (const [i, history] of damaged.entries()) {
        await db.execute({ sql: "UPDATE tasks SET step_history = ? WHERE id = ?", args: [history, ids[i]!] })
      }
    } finally {
      db.close()
    }
    for (const [i, taskId] of ids.entries()) {
      const approved = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, { [HEADER]: "bob@acme.test" })
      expect(approved.status, `${damaged[i]}: ${approved.text}`).toBe(200)
      expect(await stateOf(taskId), damaged[i]).toEqual({ status: "IN_PROGRESS", step: "cfo_approval", decided: ["controller_approval"] })
      // The move started a history again: the CFO's decision, one after, applies to its step.
      const cfo = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, { [HEADER]: "carl@acme.test" })
      expect(cfo.status, `${damaged[i]}: ${cfo.text}`).toBe(200)
      expect((await stateOf(taskId)).step, damaged[i]).toBe("file_receipt")
    }
  }, 60_000)
})
