/**
 * In process, on the embedded store (SQLite): an event written through `appendToTimeline` in a
 * transaction reaches the tenant's subscriptions, and only theirs; a rolled-back one reaches
 * nobody; `task.waiting` is sent like any other type and carries the task's console URL only
 * when SVC_PUBLIC_URL was set explicitly. Retry-After's reading; retention of the log.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { appendToTimeline } from "../../src/workspace/embedded/timeline.js"
import { contractFixture, ID, SLUG } from "../workspace/contractFixture.js"
import { type Receiver, startReceiver } from "./receiver.js"

let receiver: Receiver
const dirs: Array<string> = []

beforeAll(async () => {
  receiver = await startReceiver()
})
afterAll(async () => {
  await receiver.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const WAITING = {
  type: "task.waiting",
  payload: { stepId: "approve_1", title: "First approval", component: "APPROVAL", assignees: ["ann@alpha.example"], dueAt: "2026-12-01T00:00:00.000Z" }
}

/** Subscribes `path` for tenant A (and a decoy for tenant B), writes the event in a transaction, returns what arrived. */
const scenario = (
  path: string,
  publicUrl: Option.Option<string>,
  rollBack: boolean,
  after: (secret: string) => Effect.Effect<void, never, SqlClient.SqlClient>
) => {
  const dir = mkdtempSync(join(tmpdir(), "webhooks-inproc-"))
  dirs.push(dir)
  return Effect.gen(function*() {
    const ws = yield* EmbeddedWorkspace
    const sql = yield* SqlClient.SqlClient
    const sub = yield* ws.webhooks.create({ tenant: SLUG.tenantA, url: receiver.url(path), events: ["task.waiting"] })
    yield* ws.webhooks.create({ tenant: SLUG.tenantB, url: receiver.url(`${path}-beta`) })
    const write = sql.withTransaction(Effect.andThen(
      appendToTimeline(sql, ID.tenantA, ID.taskApprove, [WAITING], new Date().toISOString()),
      rollBack ? Effect.fail("rolled back") : Effect.void
    ))
    yield* Effect.ignore(write)
    // The store (and its deliverer) lives while this runs.
    yield* after(sub.secret)
    return sub
  }).pipe(
    Effect.provide(makeEmbeddedLayerWithSql({
      url: `file:${join(dir, "workspace.db")}`,
      fixture: contractFixture(),
      retryInterval: "1 hour",
      webhooks: { urlAllow: [`127.0.0.1:${receiver.port}`], publicUrl, pollIntervalMs: 50 }
    })),
    Effect.provideService(References.MinimumLogLevel, "None")
  )
}

const runUntilReceived = async (path: string, publicUrl: Option.Option<string>) => {
  let secret = ""
  await Effect.runPromise(scenario(path, publicUrl, false, (s) => {
    secret = s
    return Effect.asVoid(Effect.promise(() => receiver.waitFor(path, 1, 10_000)))
  }))
  const [r] = receiver.received(path)
  return new Webhook(secret).verify(r!.body, r!.headers as Record<string, string>) as { type: string; data: Record<string, unknown> }
}

describe("task.waiting", () => {
  it("is sent with its step, assignees and dueAt, and the console URL of its task when SVC_PUBLIC_URL is set", async () => {
    const event = await runUntilReceived("/waiting-url", Option.some("https://gw.example/"))
    expect(event.type).toBe("task.waiting")
    expect(event.data).toMatchObject({
      tenantId: ID.tenantA,
      taskId: ID.taskApprove,
      entityId: ID.entityA1,
      stepId: "approve_1",
      assignees: ["ann@alpha.example"],
      dueAt: "2026-12-01T00:00:00.000Z",
      consoleUrl: `https://gw.example/#/tasks/${ID.taskApprove}`
    })
    // Another tenant's subscription got nothing.
    expect(receiver.received("/waiting-url-beta")).toHaveLength(0)
  })

  it("carries no console URL when SVC_PUBLIC_URL is not set", async () => {
    const event = await runUntilReceived("/waiting-no-url", Option.none())
    expect(event.data.consoleUrl).toBeUndefined()
    expect(event.data.stepId).toBe("approve_1")
  })

  it("a rolled-back transaction queues nothing", async () => {
    await Effect.runPromise(scenario("/rolled-back", Option.none(), true, () =>
      Effect.gen(function*() {
        // A committed event after it: once that one has arrived, the rolled-back one would have too.
        const sql = yield* SqlClient.SqlClient
        yield* sql.withTransaction(appendToTimeline(sql, ID.tenantA, ID.taskApprove, [{ ...WAITING, payload: { ...WAITING.payload, stepId: "committed" } }], new Date().toISOString()))
        yield* Effect.promise(() => receiver.waitFor("/rolled-back", 1, 10_000))
        yield* Effect.sleep("300 millis")
      }).pipe(Effect.orDie)))
    const got = receiver.received("/rolled-back")
    expect(got).toHaveLength(1)
    expect(JSON.parse(got[0]!.body).data.stepId).toBe("committed")
  })
})

describe("Retry-After", () => {
  it("reads seconds (however many digits) and HTTP dates; ignores the rest", async () => {
    const { parseRetryAfter } = await import("../../src/workspace/embedded/webhookPost.js")
    const now = Date.parse("2026-12-05T00:00:00Z")
    expect(parseRetryAfter("2", now)).toBe(2000)
    expect(parseRetryAfter("99999999999", now)).toBe(99999999999000)
    expect(parseRetryAfter("Sat, 05 Dec 2026 00:00:30 GMT", now)).toBe(30_000)
    expect(parseRetryAfter("-5", now)).toBeUndefined()
    expect(parseRetryAfter("soon", now)).toBeUndefined()
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
  })
})

describe("retention", () => {
  it("messages done 30 days ago go with their attempts; pending and recent ones stay", async () => {
    const dir = mkdtempSync(join(tmpdir(), "webhooks-retention-"))
    dirs.push(dir)
    const store = <A>(body: Effect.Effect<A, unknown, SqlClient.SqlClient | EmbeddedWorkspace>) =>
      Effect.runPromise(body.pipe(
        Effect.provide(makeEmbeddedLayerWithSql({ url: `file:${join(dir, "workspace.db")}`, fixture: contractFixture(), retryInterval: "1 hour" })),
        Effect.provideService(References.MinimumLogLevel, "None"),
        Effect.orDie
      ))
    const old = Date.now() - 31 * 24 * 60 * 60 * 1000
    await store(Effect.gen(function*() {
      const ws = yield* EmbeddedWorkspace
      const sql = yield* SqlClient.SqlClient
      const sub = yield* ws.webhooks.create({ tenant: SLUG.tenantA, url: "https://receiver.example/retention" })
      const row = (webhookId: string, state: string, finished: number | null) => ({
        webhook_id: webhookId, subscription_id: sub.id, tenant_id: ID.tenantA, chain: "c", event_type: "task.created",
        body: "{}", created_ms: old, state, attempts: 1, next_attempt_ms: null, finished_ms: finished
      })
      yield* sql`INSERT INTO webhook_messages ${sql.insert([row("msg_old", "delivered", old), row("msg_recent", "failed", Date.now()), row("msg_waiting", "pending", null)])}`
      const [m] = yield* sql<{ id: number }>`SELECT id FROM webhook_messages WHERE webhook_id = 'msg_old'`
      yield* sql`INSERT INTO webhook_attempts ${sql.insert({ message_id: m!.id, subscription_id: sub.id, attempted_at: new Date(old).toISOString(), status_code: 200, error: null, duration_ms: 1, outcome: "delivered" })}`
    }))
    // A new start: its deliverer prunes on its first pass.
    const left = await store(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < 100; i++) {
        const rows = yield* sql<{ webhook_id: string }>`SELECT webhook_id FROM webhook_messages ORDER BY id`
        if (!rows.some((r) => r.webhook_id === "msg_old")) {
          const [a] = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM webhook_attempts`
          return { messages: rows.map((r) => r.webhook_id), attempts: Number(a!.n) }
        }
        yield* Effect.sleep("50 millis")
      }
      return undefined
    }))
    expect(left).toEqual({ messages: ["msg_recent", "msg_waiting"], attempts: 0 })
  })
})
