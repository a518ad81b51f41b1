/**
 * What a database of the previous release (970bdf8: migrations 0001-0006, one seq space per
 * task) must be once the built process has opened it, on SQLite and PostgreSQL alike: every
 * stored event keeps its seq, payload, labels and createdAt, gets a position in its task's former
 * seq order, is marked as the gateway's when its source was the audit's or the engine's (or an
 * agent's action record), as the agent's for an agent's own event, else as the producer's; and
 * the timeline takes new posts and reads on.
 *
 * The databases are ./fixtures/release-970bdf8.sql and .pg.sql, written by
 * ./fixtures/makeRelease.ts against a build of 970bdf8 (how: see that file): sparse seqs, seq 0,
 * the top seq and the agent's events past it, non-ASCII payloads, the engine's and the audit's
 * events in the same seq space as the producers'.
 */
import { describe, expect, it } from "vitest"
import { call, connect, KEY_A, ok } from "../mcp/world.js"
import { http } from "../support/process.js"
import { EXPENSE_TASK } from "../support/world.js"
import { expectEachOnce, readTimeline, type TimelineEvent } from "./support.js"

/** An events row of the old release, as a TaskEvent without position and origin. */
export interface OldEvent {
  readonly taskId: string
  readonly seq: number
  readonly type: string
  readonly source: string
  readonly sourceLabel?: string
  readonly payload: Record<string, unknown>
  readonly groupKey?: string
  readonly createdAt: string
}

export const OLD_MIGRATIONS = ["init", "idempotency_keys", "signals_pending_by_task", "signal_leases", "subledger_rows_by_task", "decisions_attributed"]

/** An old `events` row (either store's column values) as an OldEvent. */
export const oldEventOfRow = (r: Record<string, unknown>): OldEvent => ({
  taskId: String(r.task_id),
  seq: Number(r.seq),
  type: String(r.type),
  source: String(r.source),
  ...(r.source_label !== null ? { sourceLabel: String(r.source_label) } : {}),
  payload: JSON.parse(String(r.payload)) as Record<string, unknown>,
  ...(r.group_key !== null ? { groupKey: String(r.group_key) } : {}),
  createdAt: String(r.created_at)
})

const originOf = (e: OldEvent) =>
  e.source === "audit" || e.source === "workspace" || (e.source.startsWith("agent:") && e.type === "agent.action")
    ? "gateway"
    : e.source.startsWith("agent:")
    ? "agent"
    : "producer"

const withoutPosition = ({ origin: _origin, position: _position, ...e }: TimelineEvent) => e

/**
 * The checks, against the built process at `url()` on the migrated database whose old events
 * (read before it started, in (task, seq) order) are `old()`.
 */
export const migrationChecks = (store: string, url: () => string, old: () => ReadonlyArray<OldEvent>) =>
  describe(`a database of the previous release (${store})`, () => {
    it("every stored event kept as it was, in its task's seq order, marked by who wrote it", async () => {
      const tasks = [...new Set(old().map((e) => e.taskId))]
      expect(tasks.length).toBeGreaterThanOrEqual(2)
      // What the fixture was written to hold.
      expect(old().map((e) => e.seq)).toEqual(expect.arrayContaining([0, 2_147_483_647, 2_147_483_648]))
      for (const taskId of tasks) {
        const before = old().filter((e) => e.taskId === taskId)
        const { events } = await readTimeline(url(), taskId, 3)
        expectEachOnce(events)
        expect(events.map(withoutPosition)).toEqual(before)
        expect(events.map((e) => e.origin)).toEqual(before.map(originOf))
      }
      const all = (await Promise.all(tasks.map((t) => readTimeline(url(), t)))).flatMap((r) => r.events)
      expect(new Set(all.map((e) => e.origin))).toEqual(new Set(["gateway", "agent", "producer"]))
    })

    it("takes new posts and reads on after the migrated events", async () => {
      const task = old().find((e) => e.type === "task.created")!.taskId
      const migrated = (await readTimeline(url(), task)).events
      const last = migrated[migrated.length - 1]!.position
      const events = `${url()}/v1/tasks/${task}/events`
      const note = (source: string, seq: number, text: string) => ({ type: "note", source, seq, payload: { text } })

      // Seq 1 was the audit's task.created in the old single seq space: the worker's own now.
      const one = await http("POST", events, note("worker", 1, "seq one, mine"))
      expect(one.status, one.text).toBe(200)
      expect(one.body.event).toMatchObject({ seq: 1, source: "worker", origin: "producer" })
      // A migrated event re-posted as it was: the stored one, at its migrated position; changed: a 409.
      const stored = migrated.find((e) => e.source === "worker" && e.seq === 5)!
      const again = await http("POST", events, note("worker", 5, stored.payload.text as string))
      expect(again.status).toBe(200)
      expect(again.body.event).toEqual(stored)
      expect((await http("POST", events, note("worker", 5, "changed"))).status).toBe(409)
      const top = migrated.find((e) => e.seq === 2_147_483_647)!
      expect((await http("POST", events, note("worker", 2_147_483_647, top.payload.text as string))).body.event).toEqual(top)
      // Another source at the top seq, and the gateway's own event (the approval) after them.
      expect((await http("POST", events, note("scanner", 2_147_483_647, "top of mine"))).status).toBe(200)
      expect((await http("GET", `${url()}/v1/tasks/${task}/ui`)).body.step.id).toBe("review_expenses")
      expect((await http("POST", `${url()}/v1/tasks/${task}/action`, { type: "approved", step: "review_expenses" })).status).toBe(200)

      const after = (await readTimeline(url(), task, 2, last)).events
      expect(after.map((e) => [e.origin, e.source, e.type])).toEqual([
        ["producer", "worker", "note"],
        ["producer", "scanner", "note"],
        ["gateway", "workspace", "step.completed"],
        // The approval made sign_off current: whom it waits for, the gateway's record too.
        ["gateway", "workspace", "task.waiting"]
      ])
      const whole = (await readTimeline(url(), task)).events
      expect(whole.map((e) => e.position)).toEqual([...migrated, ...after].map((e) => e.position))

      // The agent of the migrated events appends on: the next of its source, past what it had.
      const agent = await connect(url(), KEY_A)
      try {
        const ownBefore = migrated.filter((e) => e.origin === "agent")
        expect(ownBefore.length).toBeGreaterThan(0)
        const appended = ok(await call(agent, "append_event", { taskId: task, type: "reasoning.delta", groupKey: "plan", payload: { text: "encore" } }))
        expect(appended.event).toMatchObject({ origin: "agent", source: ownBefore[0]!.source })
        expect(appended.event.seq).toBeGreaterThan(Math.max(...ownBefore.map((e) => e.seq)))
        expect((await readTimeline(url(), task, undefined, after[after.length - 1]!.position)).events.map((e) => e.position)).toEqual([appended.event.position])
      } finally {
        await agent.close()
      }

      // The seeded task's migrated seq 0 answers as stored too.
      const zero = (await readTimeline(url(), EXPENSE_TASK)).events.find((e) => e.seq === 0)!
      const replay = await http("POST", `${url()}/v1/tasks/${EXPENSE_TASK}/events`, note("worker", 0, zero.payload.text as string))
      expect(replay.body.event).toEqual(zero)
    })
  })
