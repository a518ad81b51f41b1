/**
 * The embedded store's outbox relay and lock handling, in process (./embedded.test.ts has the
 * store's other guarantees; test/relay runs the same properties on real processes):
 * - a bulk write answers at its commit and the relay, woken by it, delivers in the background;
 * - two stores on one file (two processes, as far as SQLite can tell) deliver every signal
 *   exactly once and each task's signals in order;
 * - a batch the database refuses is retried one signal at a time, so only the failing signal
 *   waits (with its task's later ones behind it);
 * - closing the store mid-backlog leaves the rest pending, untouched;
 * - a write blocked by another connection's lock waits without blocking the event loop and
 *   fails with a 503 at the bound.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as SqlClient from "effect/sql/SqlClient"
import { createClient } from "@libsql/client"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EmbeddedWorkspace, type EmbeddedLayerOptions, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"

// Ids from fixtures/demo.json.
const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
/** expense-review at review_expenses, then sign_off. */
const TASK_REVIEW = "694ebd37-72d4-4ae6-b944-eb027435cd70"
/** expense-review at sign_off, the last step. */
const TASK_SIGN_OFF = "4c6e8a02-3d5f-4b7c-9e1a-2f4b6d8f0c53"
const ROW_NEEDS = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"

const tempDirs: Array<string> = []
afterAll(() => tempDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })))
const tempFile = () => {
  const dir = mkdtempSync(join(tmpdir(), "embedded-relay-"))
  tempDirs.push(dir)
  return join(dir, "workspace.db")
}

const open = (file: string, options: Omit<EmbeddedLayerOptions, "url"> = {}) =>
  Effect.map(
    Layer.build(makeEmbeddedLayerWithSql({ url: `file:${file}`, retryInterval: "1 hour", ...options })),
    (ctx) => ({ ws: Context.get(ctx, EmbeddedWorkspace), sql: Context.get(ctx, SqlClient.SqlClient) })
  )

const quiet = <A, E, R>(self: Effect.Effect<A, E, R>) => self.pipe(Effect.provideService(References.MinimumLogLevel, process.env.DEBUG_RELAY ? "Debug" : "None"))

const scalar = (sql: SqlClient.SqlClient, query: string) =>
  Effect.map(sql.unsafe<{ n: number }>(query), ([r]) => Number(r!.n))

const pending = (sql: SqlClient.SqlClient) => scalar(sql, "SELECT COUNT(*) AS n FROM signals WHERE delivered_at IS NULL")

/** Polls until `done` (the relay works in the background), for at most 20 s. */
const eventually = <A, E>(self: Effect.Effect<A, E>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    const until = Date.now() + 20_000
    for (;;) {
      const a = yield* self
      if (done(a) || Date.now() > until) return a
      yield* Effect.sleep("20 millis")
    }
  })

/** `n` pending signals for the task, as a crashed process would leave them. */
const backlog = (sql: SqlClient.SqlClient, taskId: string, n: number, name = "records_ready") =>
  sql.unsafe(
    `WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ${n})
     INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
     SELECT t.tenant_id, t.id, t.id, '${name}', '{"i":' || i || '}', t.current_step, '2026-01-01T00:00:00.000Z'
     FROM seq, tasks t WHERE t.id = '${taskId}'`
  )

const addSignal = (sql: SqlClient.SqlClient, taskId: string, name: string, payload: object, expectedStep: string | null) =>
  sql`INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
    VALUES (${ACME}, ${taskId}, ${taskId}, ${name}, ${JSON.stringify(payload)}, ${expectedStep}, '2026-01-01T00:00:00.000Z')`

/** The longest gap between 5 ms timer ticks while `self` runs: how long the event loop was held. */
const loopHeld = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    let last = performance.now()
    let worst = 0
    const timer = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - last)
      last = now
    }, 5)
    const result = yield* Effect.ensuring(self, Effect.sync(() => clearInterval(timer)))
    return { result, heldMs: worst }
  })

describe("embedded outbox relay", () => {
  it.live("a bulk write answers at its commit; the relay, woken by it, delivers the signals in the background", () =>
    quiet(Effect.scoped(Effect.gen(function*() {
      const { sql, ws } = yield* open(tempFile())
      const rows = Array.from({ length: 3000 }, (_, i) => ({ data: { i } }))
      const started = performance.now()
      const result = yield* ws.ingestData(ACME, { taskId: TASK_REVIEW, rows }, Option.some({ taskId: TASK_REVIEW, name: "records_ready" }))
      // Delivered in the request, one transaction each, this took about 15 s.
      expect(performance.now() - started).toBeLessThan(3000)
      expect(result).toHaveLength(3000)
      // Nobody calls deliverPending and the relay's idle poll is an hour: the write's wake-up does it.
      expect(yield* eventually(pending(sql), (n) => n === 0)).toBe(0)
      expect(yield* scalar(sql, "SELECT COUNT(*) AS n FROM signals WHERE attempts = 1 AND outcome IS NOT NULL")).toBe(3000)
    }))))

  it.live("a few signals are delivered before the write answers (an approval is applied when it is acknowledged)", () =>
    quiet(Effect.scoped(Effect.gen(function*() {
      const { ws } = yield* open(tempFile())
      yield* ws.signal(ACME, { taskId: TASK_SIGN_OFF, name: "approve", payload: {} })
      expect(yield* ws.getTask(TASK_SIGN_OFF)).toMatchObject({ status: "COMPLETED" })
    }))))

  it.live("two stores on one file drain one backlog together: every signal once, each task's in order", () =>
    quiet(Effect.scoped(Effect.gen(function*() {
      const file = tempFile()
      const a = yield* open(file, { signalBatchSize: 50 })
      // Behind 4,000 no-op signals, two decisions that only apply in order: review_expenses, then sign_off.
      yield* backlog(a.sql, TASK_REVIEW, 4000)
      yield* addSignal(a.sql, TASK_REVIEW, "approve", { reason: "first" }, "review_expenses")
      yield* addSignal(a.sql, TASK_REVIEW, "approve", { reason: "second" }, "sign_off")
      yield* backlog(a.sql, TASK_SIGN_OFF, 2000)
      const b = yield* open(file, { signalBatchSize: 50 })
      yield* Effect.all([a.ws.deliverPending(), b.ws.deliverPending(), a.ws.deliverPending(), b.ws.deliverPending()], {
        concurrency: "unbounded"
      })
      expect(yield* eventually(pending(a.sql), (n) => n === 0)).toBe(0)
      expect(yield* scalar(a.sql, "SELECT COUNT(*) AS n FROM signals WHERE attempts <> 1 OR outcome IS NULL")).toBe(0)
      expect(yield* a.ws.getTask(TASK_REVIEW)).toMatchObject({ status: "COMPLETED", currentStep: null })
      const outcomes = yield* a.sql<{ outcome: string }>`SELECT outcome FROM signals WHERE name = 'approve' ORDER BY id`
      expect(outcomes.map((o) => o.outcome)).toEqual(["applied", "applied"])
    }))))

  it.live("a batch the database refuses is retried one signal at a time: only the failing one waits, with its task's later ones", () =>
    quiet(Effect.gen(function*() {
      const file = tempFile()
      yield* Effect.scoped(open(file)) // the schema and the demo data
      // Left pending by a previous run (no store is open), with a row update the database now refuses.
      const raw = yield* Effect.acquireRelease(Effect.sync(() => createClient({ url: `file:${file}` })), (c) => Effect.sync(() => c.close()))
      const insert = (taskId: string, name: string, payload: object, step: string) =>
        Effect.promise(() =>
          raw.execute({
            sql: `INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
              VALUES (?, ?, ?, ?, ?, ?, '2026-01-01')`,
            args: [ACME, taskId, taskId, name, JSON.stringify(payload), step]
          })
        )
      for (let i = 0; i < 3; i++) yield* insert(TASK_REVIEW, "records_ready", { i }, "review_expenses")
      yield* insert(TASK_REVIEW, "user_action", { kind: "row_action", ledger: "expenses", action: "reject_row", rowId: ROW_NEEDS }, "review_expenses")
      for (let i = 0; i < 2; i++) yield* insert(TASK_REVIEW, "records_ready", { i }, "review_expenses")
      for (let i = 0; i < 2; i++) yield* insert(TASK_SIGN_OFF, "records_ready", { i }, "sign_off")
      yield* Effect.promise(() =>
        raw.execute(`CREATE TRIGGER hold BEFORE UPDATE ON subledger_rows BEGIN SELECT RAISE(ABORT, 'rows are read-only'); END`)
      )
      // The start's first pass goes over it in the background.
      const { sql, ws } = yield* open(file)
      // Settled when only the two behind the failing signal were never attempted.
      expect(yield* eventually(scalar(sql, "SELECT COUNT(*) AS n FROM signals WHERE attempts = 0"), (n) => n === 2)).toBe(2)
      const rows = yield* sql<{ name: string; delivered: number; attempts: number; last_error: string | null; waiting: number }>`
        SELECT name, delivered_at IS NOT NULL AS delivered, attempts, last_error, next_attempt_ms IS NOT NULL AS waiting
        FROM signals WHERE root_task_id = ${TASK_REVIEW} ORDER BY id`
      expect(rows.map((r) => [r.name, Number(r.delivered), Number(r.attempts), Number(r.waiting)])).toEqual([
        ["records_ready", 1, 1, 0],
        ["records_ready", 1, 1, 0],
        ["records_ready", 1, 1, 0],
        ["user_action", 0, 1, 1],
        ["records_ready", 0, 0, 0],
        ["records_ready", 0, 0, 0]
      ])
      expect(rows[3]!.last_error).toContain("rows are read-only")
      // In backoff: a normal pass leaves the task alone.
      expect(yield* ws.deliverPending()).toEqual({ delivered: 0, failed: 0, deferred: 3 })
      yield* sql.unsafe(`DROP TRIGGER hold`)
      expect(yield* ws.deliverPending({ force: true })).toEqual({ delivered: 3, failed: 0, deferred: 0 })
      expect(yield* pending(sql)).toBe(0)
    }).pipe(Effect.scoped)))

  it.live("closing the store stops the relay mid-backlog: the rest stays pending, untouched, for the next start", () =>
    quiet(Effect.gen(function*() {
      const file = tempFile()
      yield* Effect.scoped(open(file)) // the schema and the demo data
      const raw = yield* Effect.acquireRelease(Effect.sync(() => createClient({ url: `file:${file}` })), (c) => Effect.sync(() => c.close()))
      const count = (q: string) => Effect.map(Effect.promise(() => raw.execute(q)), (r) => Number(r.rows[0]![0]))
      // Left by a crash: committed, undelivered.
      yield* Effect.promise(() =>
        raw.execute(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < 50000)
          INSERT INTO signals (tenant_id, root_task_id, task_id, name, payload, expected_step, created_at)
          SELECT '${ACME}', '${TASK_REVIEW}', '${TASK_REVIEW}', 'records_ready', '{}', 'review_expenses', '2026-01-01' FROM seq`)
      )
      // The relay starts on it at once; the store closes shortly after.
      yield* Effect.scoped(Effect.andThen(open(file), Effect.sleep("200 millis")))
      const left = yield* count("SELECT COUNT(*) FROM signals WHERE delivered_at IS NULL")
      expect(left).toBeGreaterThan(0)
      expect(left).toBeLessThan(50_000)
      expect(yield* count("SELECT COUNT(*) FROM signals WHERE (delivered_at IS NULL) <> (outcome IS NULL) OR attempts > 1")).toBe(0)
      // The next start delivers the rest, each once.
      yield* Effect.scoped(Effect.gen(function*() {
        const { sql } = yield* open(file)
        expect(yield* eventually(pending(sql), (n) => n === 0)).toBe(0)
      }))
      expect(yield* count("SELECT COUNT(*) FROM signals WHERE attempts <> 1 OR outcome IS NULL")).toBe(0)
    }).pipe(Effect.scoped)), 60_000)

  it.live("a write blocked by another connection's lock waits without holding the event loop, then fails with 503 at the bound", () =>
    quiet(Effect.scoped(Effect.gen(function*() {
      const file = tempFile()
      const { ws } = yield* open(file, { busyTimeoutMs: 1500 })
      const holder = createClient({ url: `file:${file}` })
      yield* Effect.addFinalizer(() => Effect.sync(() => holder.close()))
      yield* Effect.promise(() => holder.execute("BEGIN IMMEDIATE"))
      yield* Effect.promise(() => holder.execute("UPDATE tenants SET name = name"))
      const started = performance.now()
      const { heldMs, result } = yield* loopHeld(Effect.flip(ws.appendEvent(ACME, TASK_REVIEW, { type: "t", source: "w", seq: 900, payload: {} })))
      const waited = performance.now() - started
      expect(result).toMatchObject({ _tag: "ServiceUnavailable", message: expect.stringContaining("busy") })
      expect(waited).toBeGreaterThanOrEqual(1450)
      expect(waited).toBeLessThan(4000)
      // SQLite's own busy_timeout would sleep on this thread for the whole wait.
      expect(heldMs).toBeLessThan(500)
      // Released within the bound: the write waits for it and goes through.
      yield* Effect.promise(() => holder.execute("COMMIT"))
      yield* Effect.promise(() => holder.execute("BEGIN IMMEDIATE"))
      yield* Effect.forkChild(Effect.delay(Effect.promise(() => holder.execute("COMMIT")), "150 millis"))
      const event = yield* ws.appendEvent(ACME, TASK_REVIEW, { type: "t", source: "w", seq: 901, payload: {} })
      expect(event.seq).toBe(901)
    }))))
})
