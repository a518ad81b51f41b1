/**
 * The webhook deliverer: a background fiber of the store's scope that sends the outbox's due
 * messages (./webhookOutbox.ts) to their receivers, signed as Standard Webhooks 1.0
 * (./webhookSigning.ts), through the shared address guard (./webhookPost.ts).
 *
 * - At most `concurrency` attempts in flight, at most PER_SUBSCRIPTION of them for one
 *   subscription: a slow or dead receiver holds a few slots, never the others' (and never a
 *   request: writes only insert rows). Only claimed rows are in memory, so a million undelivered
 *   messages cost database rows, not heap.
 * - A claim is a compare-and-set lease on the row (claimed_by, claimed_until_ms, longer than two
 *   timeouts): on PostgreSQL two replicas never make one attempt twice; a replica that dies
 *   mid-attempt leaves a lease that runs out, and another replica makes the attempt again
 *   (at-least-once; the receiver deduplicates on webhook-id).
 * - Only a chain's head is due, so one task's events reach one subscription in order; when the
 *   head is delivered, or has failed for good, the next one becomes due.
 * - Outcomes: 2xx delivered. 410 disables the subscription. Anything else (3xx, 4xx, 5xx, no
 *   answer within the timeout, refused address) is retried on the schedule (Svix's by default;
 *   Retry-After on 429/503 is waited at least); past the schedule the message has failed and its
 *   chain moves on. A subscription failing (no success) for `disableAfterMs` is disabled, with the
 *   reason in its record and the log. Each attempt is written to the deliveries log.
 * - Messages done (delivered or failed) 30 days ago are pruned with their attempts.
 * - Woken by enqueues in this process and by NOTIFY from other replicas (PostgreSQL); polls
 *   every `pollIntervalMs` besides (retries come due, a lost wake-up).
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type * as PgClient from "@effect/sql-pg/PgClient"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { webhookMetrics } from "../../observability/metrics.js"
import { describeError, yieldToEventLoop } from "./db.js"
import { chainLock, onWebhookEnqueued, WEBHOOKS_CHANNEL } from "./webhookOutbox.js"
import { settledMessages } from "./timeline.js"
import { makeWebhookPoster, type PostResult } from "./webhookPost.js"
import type { DecisionLinkStore } from "./links.js"
import { disableSubscription, signingSecrets } from "./webhooks.js"
import { signedHeaders } from "./webhookSigning.js"
import { defaultOf, defaultTextOf } from "../../config/settings.js"

const PgClientTag = Context.Service<PgClient.PgClient>("@effect/sql-pg/PgClient")

/** Svix's schedule: immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = defaultTextOf("SVC_WEBHOOK_RETRY_SCHEDULE")
export const DEFAULT_WEBHOOK_TIMEOUT_MS = defaultOf("SVC_WEBHOOK_TIMEOUT_MS")
export const DEFAULT_WEBHOOK_CONCURRENCY = defaultOf("SVC_WEBHOOK_CONCURRENCY")
export const DEFAULT_WEBHOOK_DISABLE_AFTER_MS = defaultOf("SVC_WEBHOOK_DISABLE_AFTER_MS")
/** Attempts one subscription may have in flight at once. */
export const PER_SUBSCRIPTION = 4
/** How long delivered and failed messages (and their attempts, the deliveries log) are kept. */
export const RETENTION_MS = 30 * 24 * 60 * 60 * 1000
const PRUNE_EVERY_MS = 10 * 60 * 1000
/** Least time between two log lines about one subscription's failures. */
const FAILURE_LOG_MS = 10_000
/** The longest Retry-After honoured. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

/** `0,5s,5m,30m,2h` → delays in ms (a bare number is ms); a message naming the bad entry otherwise. */
export const parseRetrySchedule = (text: string): { ok: true; value: ReadonlyArray<number> } | { ok: false; message: string } => {
  const parts = text.split(",").map((p) => p.trim())
  if (parts.length === 0 || parts.some((p) => p === "")) return { ok: false, message: "expected a comma list of delays such as 0,5s,5m,30m" }
  if (parts.length > 50) return { ok: false, message: "at most 50 attempts" }
  const out: Array<number> = []
  for (const p of parts) {
    const m = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(p)
    if (m === null) return { ok: false, message: `"${p.slice(0, 32)}" is not a delay (a number with ms, s, m, h or d)` }
    const ms = Number(m[1]) * UNITS[m[2] ?? "ms"]!
    if (ms > 7 * 86_400_000) return { ok: false, message: `"${p}" is longer than 7 days` }
    out.push(ms)
  }
  return { ok: true, value: out }
}

export interface WebhookDeliveryOptions {
  /** Delay before each attempt: the first (normally 0) after the event, then after each failure. */
  readonly retryScheduleMs?: ReadonlyArray<number> | undefined
  readonly timeoutMs?: number | undefined
  readonly urlAllow?: ReadonlyArray<string> | undefined
  readonly concurrency?: number | undefined
  readonly disableAfterMs?: number | undefined
  readonly pollIntervalMs?: number | undefined
  /** SVC_PUBLIC_URL when the operator set it: task.waiting carries the console URL of its task. */
  readonly publicUrl?: Option.Option<string> | undefined
}

interface Claimed {
  readonly id: number
  readonly webhook_id: string
  readonly subscription_id: string
  readonly chain: string
  readonly event_type: string
  readonly body: string
  readonly attempts: number
  readonly created_ms: number
}

interface SubscriptionForSend {
  readonly url: string
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_until_ms: number | string | null
  readonly older_secrets: string | null
  readonly enabled: number | string
  readonly failing_since_ms: number | string | null
}

class LeaseLost extends Data.TaggedError("LeaseLost") {}

type Outcome = "delivered" | "retrying" | "failed" | "disabled"

/** What the deliverer needs of the decision links (./links.ts): task.waiting's links per named person. */
export type WaitingLinkMaker = Pick<DecisionLinkStore, "linksEnabled" | "signingReady" | "mintWaitingLinks" | "boundTenantId">

/**
 * How long a new task.waiting of another tenant is left for that tenant's own gateway, which
 * makes its links under its own public URL (several tenants' gateways on one database), before
 * a gateway bound to another tenant sends it (without links).
 */
export const LINK_OWNER_GRACE_MS = 10_000

/** Whether a task.waiting's data names a person (not only groups and an agent), or had its assignees left out. */
const namesPeople = (data: Record<string, unknown>): boolean =>
  (Array.isArray(data.omitted) && data.omitted.includes("assignees")) ||
  (Array.isArray(data.assignees) && data.assignees.some((a) =>
    typeof a === "string" && !/^(group|agent):/.test(a.normalize("NFKC").toLowerCase())
  ))

export const makeWebhookDeliverer = (options: WebhookDeliveryOptions = {}, links?: WaitingLinkMaker) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pg = yield* Effect.serviceOption(PgClientTag)
    const schedule = options.retryScheduleMs ?? (parseRetrySchedule(DEFAULT_WEBHOOK_RETRY_SCHEDULE) as { value: ReadonlyArray<number> }).value
    const timeoutMs = options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY)
    const perSubscription = Math.min(PER_SUBSCRIPTION, concurrency)
    const disableAfterMs = options.disableAfterMs ?? DEFAULT_WEBHOOK_DISABLE_AFTER_MS
    const pollInterval = Duration.millis(options.pollIntervalMs ?? 1000)
    const publicUrl = Option.map(options.publicUrl ?? Option.none(), (u) => u.replace(/\/+$/, ""))
    // A lease outlives an attempt (timeout) with room to record it.
    const leaseMs = 2 * timeoutMs + 10_000
    const replicaId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
    const post = makeWebhookPoster(options.urlAllow ?? [], timeoutMs)
    const wakeUps = yield* Queue.sliding<void>(1)
    const inFlight = new Map<string, number>()
    let total = 0

    /**
     * A task.waiting message gets, at its first attempt, written into the stored body: the task's
     * page in the console (`consoleUrl`, under this process's SVC_PUBLIC_URL) and, for an
     * APPROVAL step that names people, an approve/reject pair per person (`data.links`), in the
     * same transaction that stores the pairs. Every later attempt (and a resend) sends the body as
     * stored, whichever process makes it: the URL added at send time had been the sender's, so a
     * retry another tenant's gateway took sent that gateway's address, and one webhook-id went out
     * with two bodies. A change that rolled back queued no message, so no pair exists for a step
     * that never became current; a step that has moved on by then gets none. Another tenant's
     * message (left to its own gateway for LINK_OWNER_GRACE_MS first: see `claim`) gets neither:
     * this process's address serves neither its links nor its console.
     * Undefined: this process no longer holds the message's lease (no attempt now).
     */
    const firstAttemptBody = (m: Claimed): Effect.Effect<Claimed | undefined, unknown> =>
      Effect.gen(function*() {
        if (m.attempts > 0 || m.event_type !== "task.waiting" || m.chain === "") return m
        const parsed = JSON.parse(m.body) as { data?: Record<string, unknown> }
        const data = parsed.data ?? {}
        const tenantId = data.tenantId
        if (typeof tenantId !== "string" || "links" in data || "consoleUrl" in data) return m
        const bound = links === undefined ? undefined : yield* links.boundTenantId
        if (bound !== undefined && bound !== tenantId) return m
        const maker = links !== undefined && links.linksEnabled && data.component === "APPROVAL" &&
            typeof data.stepId === "string" && namesPeople(data)
          ? links
          : undefined
        if (maker === undefined && Option.isNone(publicUrl)) return m
        if (maker !== undefined) yield* maker.signingReady
        return yield* sql.withTransaction(Effect.gen(function*() {
          const made = maker === undefined ? [] : yield* maker.mintWaitingLinks({ tenantId, taskId: m.chain, stepId: data.stepId as string })
          const added = {
            ...(made.length > 0 ? { links: made } : {}),
            ...(Option.isSome(publicUrl) ? { consoleUrl: `${publicUrl.value}/#/tasks/${encodeURIComponent(m.chain)}` } : {})
          }
          if (Object.keys(added).length === 0) return m
          const body = JSON.stringify({ ...parsed, data: { ...data, ...added } })
          const kept = yield* sql<{ id: number | string }>`UPDATE webhook_messages SET body = ${body}
            WHERE id = ${m.id} AND claimed_by = ${replicaId} AND state = 'pending' RETURNING id`
          // The lease ran out meanwhile: undo the pairs (the transaction fails), make no attempt.
          if (kept.length === 0) return yield* Effect.fail(new LeaseLost())
          return { ...m, body }
        })).pipe(Effect.catchTag("LeaseLost", () => Effect.succeed(undefined)))
      })

    /** Due heads of chains, at most PER_SUBSCRIPTION per subscription counting those in flight, leased to this process. */
    const claim = (free: number) =>
      Effect.gen(function*() {
        const now = Date.now()
        const saturated = [...inFlight].filter(([, n]) => n >= perSubscription).map(([id]) => id)
        // A gateway bound to a tenant leaves another tenant's new task.waiting to that tenant's gateway a while.
        const bound = links === undefined ? undefined : yield* links.boundTenantId
        const candidates = yield* sql<{ id: number | string; subscription_id: string }>`
          SELECT m.id, m.subscription_id FROM webhook_messages m
          WHERE m.state = 'pending' AND m.next_attempt_ms IS NOT NULL AND m.next_attempt_ms <= ${now}
            AND (m.claimed_until_ms IS NULL OR m.claimed_until_ms < ${now})
            ${saturated.length > 0 ? sql`AND NOT (${sql.in("m.subscription_id", saturated)})` : sql``}
            ${
          bound !== undefined
            ? sql`AND NOT (m.event_type = 'task.waiting' AND m.attempts = 0 AND m.tenant_id <> ${bound}
                AND m.created_ms > ${now - LINK_OWNER_GRACE_MS})`
            : sql``
        }
            AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = m.subscription_id AND s.enabled = 1)
            ${settledMessages(sql)}
          ORDER BY m.next_attempt_ms, m.id LIMIT ${free * 4}`
        const room = new Map<string, number>()
        const picked: Array<number> = []
        for (const c of candidates) {
          if (picked.length >= free) break
          const left = room.get(c.subscription_id) ?? perSubscription - (inFlight.get(c.subscription_id) ?? 0)
          if (left <= 0) continue
          room.set(c.subscription_id, left - 1)
          picked.push(Number(c.id))
        }
        if (picked.length === 0) return []
        // Compare-and-set: a row another process leased meanwhile is not taken.
        const rows = yield* sql<Claimed>`UPDATE webhook_messages SET claimed_by = ${replicaId}, claimed_until_ms = ${now + leaseMs}
          WHERE ${sql.in("id", picked)} AND state = 'pending' AND next_attempt_ms IS NOT NULL AND next_attempt_ms <= ${now}
            AND (claimed_until_ms IS NULL OR claimed_until_ms < ${now})
          RETURNING id, webhook_id, subscription_id, chain, event_type, body, attempts, created_ms`
        return rows.map((r) => ({ ...r, id: Number(r.id), attempts: Number(r.attempts), created_ms: Number(r.created_ms) }))
      })

    /** The chain's next message becomes due (its subscription enabled); call with the chain's lock held. */
    const promoteNext = (m: Claimed, now: number) =>
      sql`UPDATE webhook_messages SET next_attempt_ms = ${now} WHERE id = (
          SELECT id FROM webhook_messages WHERE subscription_id = ${m.subscription_id} AND chain = ${m.chain} AND state = 'pending'
          ORDER BY tx, id LIMIT 1)
        AND next_attempt_ms IS NULL AND claimed_by IS NULL
        AND EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.id = ${m.subscription_id} AND s.enabled = 1)`

    /** Writes the attempt's outcome; the message's changes only while this process still holds its lease. */
    const record = (m: Claimed, sub: SubscriptionForSend, result: PostResult, durationMs: number, attemptedAt: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = Date.now()
        yield* chainLock(sql, m.subscription_id, m.chain)
        const status = result.status
        // Removed while the attempt was on the wire: nothing is left to record it against.
        const [exists] = yield* sql<{ id: string }>`SELECT id FROM webhook_subscriptions WHERE id = ${m.subscription_id}`
        if (exists === undefined) return { outcome: "failed" as Outcome, logged: "the subscription was removed" }
        const ok = status !== undefined && status >= 200 && status < 300
        const attempts = m.attempts + 1
        const error = ok ? null : (result.error ?? `receiver answered ${status}`).slice(0, 1000)
        let outcome: Outcome
        let logged = error
        const mine = sql`id = ${m.id} AND claimed_by = ${replicaId} AND state = 'pending'`
        if (ok) {
          outcome = "delivered"
          yield* sql`UPDATE webhook_messages SET state = 'delivered', attempts = ${attempts}, finished_ms = ${now},
            next_attempt_ms = NULL, claimed_by = NULL, claimed_until_ms = NULL, last_error = NULL WHERE ${mine}`
          yield* promoteNext(m, now)
          if (sub.failing_since_ms !== null) {
            yield* sql`UPDATE webhook_subscriptions SET failing_since_ms = NULL WHERE id = ${m.subscription_id}`
          }
        } else if (status === 410) {
          outcome = "disabled"
          logged = `${error}; subscription disabled (410 Gone)`
          yield* sql`UPDATE webhook_messages SET state = 'failed', attempts = ${attempts}, finished_ms = ${now},
            next_attempt_ms = NULL, claimed_by = NULL, claimed_until_ms = NULL, last_error = ${error} WHERE ${mine}`
          yield* disableSubscription(sql, m.subscription_id, `the receiver answered 410 Gone at ${new Date(now).toISOString()}`)
        } else {
          const last = attempts >= schedule.length
          if (last) {
            outcome = "failed"
            yield* sql`UPDATE webhook_messages SET state = 'failed', attempts = ${attempts}, finished_ms = ${now},
              next_attempt_ms = NULL, claimed_by = NULL, claimed_until_ms = NULL, last_error = ${error} WHERE ${mine}`
            yield* promoteNext(m, now)
          } else {
            outcome = "retrying"
            const delay = Math.max(schedule[attempts]!, Math.min(result.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS))
            yield* sql`UPDATE webhook_messages SET attempts = ${attempts}, next_attempt_ms = ${now + delay},
              claimed_by = NULL, claimed_until_ms = NULL, last_error = ${error} WHERE ${mine}`
          }
          const since = sub.failing_since_ms === null ? null : Number(sub.failing_since_ms)
          if (since === null) {
            yield* sql`UPDATE webhook_subscriptions SET failing_since_ms = ${now} WHERE id = ${m.subscription_id} AND failing_since_ms IS NULL`
          } else if (now - since >= disableAfterMs) {
            const reason = `failing since ${new Date(since).toISOString()}, longer than SVC_WEBHOOK_DISABLE_AFTER_MS ` +
              `(${disableAfterMs} ms); disabled at ${new Date(now).toISOString()}`
            yield* disableSubscription(sql, m.subscription_id, reason)
            logged = `${error}; subscription disabled: ${reason}`
            outcome = "disabled"
          }
        }
        yield* sql`INSERT INTO webhook_attempts ${
          sql.insert({
            message_id: m.id,
            subscription_id: m.subscription_id,
            attempted_at: attemptedAt,
            status_code: status ?? null,
            error: logged,
            duration_ms: durationMs,
            outcome: outcome === "disabled" ? (ok ? "delivered" : "failed") : outcome
          })
        }`
        return { outcome, logged }
      }))

    /**
     * A log line per failure, but at most one per subscription every FAILURE_LOG_MS (a dead
     * receiver behind a million messages must not flood the log); the next line says how many
     * were left out. Disabling is always logged. Undefined: leave this one out.
     */
    const failureLog = new Map<string, { at: number; suppressed: number }>()
    const failureLine = (subscriptionId: string, always: boolean): string | undefined => {
      const now = Date.now()
      const last = failureLog.get(subscriptionId)
      if (!always && last !== undefined && now - last.at < FAILURE_LOG_MS) {
        last.suppressed++
        return undefined
      }
      if (failureLog.size >= 10_000) failureLog.clear()
      failureLog.set(subscriptionId, { at: now, suppressed: 0 })
      return last !== undefined && last.suppressed > 0
        ? ` (${last.suppressed} more failed attempts of this subscription not logged since the last line)`
        : ""
    }

    /** One attempt of a claimed message; never fails (a database failure leaves the lease to run out). */
    const attempt = (m: Claimed): Effect.Effect<void> =>
      Effect.gen(function*() {
        const [sub] = yield* sql<SubscriptionForSend>`SELECT url, secret, previous_secret, previous_until_ms, older_secrets, enabled,
          failing_since_ms FROM webhook_subscriptions WHERE id = ${m.subscription_id}`
        if (sub === undefined || Number(sub.enabled) !== 1) {
          yield* sql`UPDATE webhook_messages SET claimed_by = NULL, claimed_until_ms = NULL WHERE id = ${m.id} AND claimed_by = ${replicaId}`
          return
        }
        const stored = yield* firstAttemptBody(m)
        if (stored === undefined) return
        const body = stored.body
        const started = Date.now()
        const secrets = signingSecrets(sub, started)
        const headers = signedHeaders(secrets, m.webhook_id, Math.floor(started / 1000), body)
        const result = yield* post(sub.url, headers, body)
        const durationMs = Date.now() - started
        const { logged, outcome } = yield* record(m, sub, result, durationMs, new Date(started).toISOString())
        webhookMetrics.attempt(outcome)
        if (outcome !== "delivered") {
          const line = failureLine(m.subscription_id, outcome === "disabled")
          if (line !== undefined) {
            yield* Effect.logWarning(
              `webhook ${m.webhook_id} (${m.event_type}) to subscription ${m.subscription_id}: attempt ${m.attempts + 1} ${outcome}: ${logged}${line}`
            )
          }
        }
      }).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.interrupt
            : Effect.logError(`webhook ${m.webhook_id}: could not record its attempt: ${describeError(Cause.squash(cause))}`)
        )
      )

    let lastQueueReport = 0
    const reportQueue = Effect.gen(function*() {
      const now = Date.now()
      if (now - lastQueueReport < 10_000) return
      lastQueueReport = now
      const [oldest] = yield* sql<{ created_ms: number | string }>`SELECT created_ms FROM webhook_messages
        WHERE state = 'pending' ORDER BY id LIMIT 1`
      const [count] = yield* sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM (SELECT id FROM webhook_messages
        WHERE state = 'pending' ORDER BY id LIMIT 100000) pending`
      webhookMetrics.queue(Number(count?.n ?? 0), oldest === undefined ? 0 : Math.max(0, (now - Number(oldest.created_ms)) / 1000))
    }).pipe(Effect.catchCause(() => Effect.void))

    /** Messages delivered or failed RETENTION_MS ago go, with their attempts: a batch per pass, every 10 minutes. */
    let lastPrune = 0
    const prune = Effect.gen(function*() {
      const now = Date.now()
      if (now - lastPrune < PRUNE_EVERY_MS) return
      lastPrune = now
      const cutoff = now - RETENTION_MS
      for (let batch = 0; batch < 100; batch++) {
        const ids = yield* sql<{ id: number | string }>`SELECT id FROM webhook_messages
          WHERE state <> 'pending' AND finished_ms < ${cutoff} ORDER BY finished_ms LIMIT 1000`
        if (ids.length === 0) return
        const list = ids.map((r) => Number(r.id))
        yield* sql.withTransaction(Effect.andThen(
          sql`DELETE FROM webhook_attempts WHERE ${sql.in("message_id", list)}`,
          sql`DELETE FROM webhook_messages WHERE ${sql.in("id", list)} AND state <> 'pending'`
        ))
        yield* yieldToEventLoop
      }
    }).pipe(Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause) ? Effect.interrupt : Effect.logWarning(`webhook deliverer: pruning failed: ${describeError(Cause.squash(cause))}`)
    ))

    const wake = () => void Queue.offerUnsafe(wakeUps, undefined)

    const listen: Effect.Effect<void> = Option.match(pg, {
      onNone: () => Effect.void,
      onSome: (client) =>
        Effect.scoped(
          Effect.flatMap(client.listen(WEBHOOKS_CHANNEL), (notifications) =>
            Stream.runForEach(Stream.fromQueue(notifications), () => Effect.sync(wake)))
        ).pipe(
          Effect.andThen(Effect.fail("listen ended")),
          Effect.retry(Schedule.spaced("1 second")),
          Effect.ignore
        )
    })

    /** Runs until interrupted (the store's scope closes); attempts in flight are interrupted with it. */
    const run: Effect.Effect<never> = Effect.gen(function*() {
      yield* Effect.forkChild(listen)
      // The enqueue runs inside its transaction: look a moment later, once it has committed.
      const unregister = onWebhookEnqueued(() => void setTimeout(wake, 25))
      yield* Effect.addFinalizer(() => Effect.sync(unregister))
      let failures = 0
      for (;;) {
        yield* reportQueue
        yield* prune
        const free = concurrency - total
        if (free > 0) {
          const claimed = yield* Effect.exit(claim(free))
          if (claimed._tag === "Failure") {
            if (Cause.hasInterruptsOnly(claimed.cause)) return yield* Effect.interrupt
            failures++
            yield* Effect.logWarning(`webhook deliverer: could not claim due messages: ${describeError(Cause.squash(claimed.cause))}`)
            yield* Effect.sleep(Duration.millis(Math.min(100 * 2 ** failures, 30_000)))
            continue
          }
          failures = 0
          for (const m of claimed.value) {
            total++
            inFlight.set(m.subscription_id, (inFlight.get(m.subscription_id) ?? 0) + 1)
            yield* Effect.forkChild(attempt(m).pipe(Effect.ensuring(Effect.sync(() => {
              total--
              const n = (inFlight.get(m.subscription_id) ?? 1) - 1
              if (n <= 0) inFlight.delete(m.subscription_id)
              else inFlight.set(m.subscription_id, n)
              wake()
            }))))
          }
          // A full batch: more may be due at once.
          if (claimed.value.length > 0 && claimed.value.length === free) continue
        }
        yield* Queue.take(wakeUps).pipe(Effect.timeout(pollInterval), Effect.ignore)
      }
    }).pipe(Effect.scoped) as Effect.Effect<never>

    return { run }
  })
