/**
 * The webhook outbox's writing side: `enqueueWebhooks` runs inside the transaction that writes
 * the gateway's own events (./timeline.ts; ./gl.ts for the tenant-level GL changes) and inserts
 * one message per event and matching enabled subscription. A rolled-back change queues nothing;
 * a committed one is delivered even if the process dies the next instant.
 *
 * Order per task and subscription: a chain (subscription, task) has at most one message due at a
 * time, its head; later messages wait with `next_attempt_ms` NULL until the head is done
 * (./webhookDelivery.ts promotes the next). On PostgreSQL the enqueue and the promotion of one
 * chain take the same transaction-scoped advisory lock, so a message written while its head
 * completes is either seen by the promotion or sees the head done. A chain's order is the
 * timeline's, (`tx`, `id`): concurrent writers to one task take the lock in any order, and a
 * message a younger transaction queued first waits behind an older one's (the deliverer sends
 * only messages no running writer is older than: ./timeline.ts `settledMessages`).
 *
 * The body is Standard Webhooks' `{type, timestamp, data}`; `data` names the tenant, the task
 * and its entity, and what changed, thinned (`thinData`): the receiver reads more through the API.
 */
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import { randomBytes } from "node:crypto"
import { charCount, firstChars } from "../../api/textLength.js"

/** What the outbox needs of an event: its type and payload. */
export interface WebhookEvent {
  readonly type: string
  readonly payload: Record<string, unknown>
}

/** A chain's key for events of no task (the tenant's GL changes). */
export const TENANT_CHAIN = ""

/** The channel a committed enqueue wakes every replica's deliverer on (PostgreSQL). */
export const WEBHOOKS_CHANNEL = "workspace_webhooks"

/** `webhook-id`: stable across every attempt of one message (the receiver's idempotency key). */
export const newWebhookId = () => `msg_${randomBytes(16).toString("hex")}`

/** The advisory lock key of one chain (PostgreSQL): enqueue and promotion of a chain serialize on it. */
export const chainLock = (sql: SqlClient.SqlClient, subscriptionId: string, chain: string) =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook:${subscriptionId}:${chain}`}::text, 0))`),
    orElse: () => Effect.void
  })

/** The current transaction's id as `webhook_messages.tx` holds it (PostgreSQL); 0 on SQLite. */
const currentTx = (sql: SqlClient.SqlClient) =>
  sql.onDialectOrElse({ pg: () => sql`pg_current_xact_id()`, orElse: () => sql`0` })

/** Keys never sent: inputs the receiver can read through the API, and may be large. */
const DROPPED_KEYS = new Set(["context"])
const MAX_STRING = 1024
const MAX_ARRAY = 20
const MAX_VALUE_JSON = 2048

/**
 * The payload as the webhook's data: strings cut at 1,024 characters, arrays at 20 items, and a
 * value whose JSON passes 2 KiB left out (its key listed in `omitted`). Ids and what changed stay.
 */
export const thinData = (payload: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  const omitted: Array<string> = []
  for (const [key, raw] of Object.entries(payload)) {
    if (DROPPED_KEYS.has(key)) continue
    let value = raw
    // Cut by characters: a cut between a surrogate pair's halves sent a lone surrogate, which
    // strict JSON parsers (serde_json) refuse, failing the receiver for good.
    if (typeof value === "string" && value.length > MAX_STRING && charCount(value) > MAX_STRING) {
      value = `${firstChars(value, MAX_STRING - 1)}…`
    }
    if (Array.isArray(value) && value.length > MAX_ARRAY) value = value.slice(0, MAX_ARRAY)
    if (value !== null && typeof value === "object" && JSON.stringify(value).length > MAX_VALUE_JSON) {
      omitted.push(key)
      continue
    }
    out[key] = value
  }
  if (omitted.length > 0) out.omitted = omitted
  return out
}

/** Wakes this process's deliverer (set by ./webhookDelivery.ts); a little after the commit. */
const localWakers = new Set<() => void>()
export const onWebhookEnqueued = (wake: () => void) => {
  localWakers.add(wake)
  return () => void localWakers.delete(wake)
}
const wakeLocal = () => {
  for (const wake of localWakers) wake()
}

interface SubscriptionRow {
  readonly id: string
  readonly events: string | null
}

/**
 * Queues the events for the tenant's enabled subscriptions that take them, in the caller's
 * transaction. `chain` is the root task id, or TENANT_CHAIN. Costs one indexed read when the
 * tenant has no subscription.
 */
export const enqueueWebhooks = (
  sql: SqlClient.SqlClient,
  tenantId: string,
  chain: string,
  events: ReadonlyArray<WebhookEvent>,
  createdAt: string
): Effect.Effect<void, SqlError> =>
  events.length === 0 ? Effect.void : Effect.gen(function*() {
    const subscriptions = yield* sql<SubscriptionRow>`SELECT id, events FROM webhook_subscriptions
      WHERE tenant_id = ${tenantId} AND enabled = 1 ORDER BY created_at, id`
    if (subscriptions.length === 0) return
    let entityId: string | null = null
    if (chain !== TENANT_CHAIN) {
      const [task] = yield* sql<{ entity_id: string }>`SELECT entity_id FROM tasks WHERE id = ${chain}`
      entityId = task?.entity_id ?? null
    }
    const nowMs = Date.now()
    let queued = 0
    for (const s of subscriptions) {
      const wanted = s.events === null ? null : new Set(JSON.parse(s.events) as Array<string>)
      const matching = events.filter((e) => wanted === null || wanted.has(e.type))
      if (matching.length === 0) continue
      yield* chainLock(sql, s.id, chain)
      // A message before these in the chain's order: an older transaction's, or this one's.
      const [head] = yield* sql<{ id: number }>`SELECT id FROM webhook_messages
        WHERE subscription_id = ${s.id} AND chain = ${chain} AND state = 'pending' AND tx <= ${currentTx(sql)} LIMIT 1`
      // These go first: what a younger transaction queued meanwhile waits behind them (never sent
      // yet: no message is sent while an older writer, this one, runs). SQLite's writes are serial.
      if (head === undefined) {
        yield* sql.onDialectOrElse({
          pg: () =>
            Effect.asVoid(sql`UPDATE webhook_messages SET next_attempt_ms = NULL WHERE subscription_id = ${s.id} AND chain = ${chain}
              AND state = 'pending' AND tx > pg_current_xact_id() AND claimed_by IS NULL`),
          orElse: () => Effect.void
        })
      }
      const rows: Array<Record<string, unknown>> = matching.map((e, i) => ({
          webhook_id: newWebhookId(),
          subscription_id: s.id,
          tenant_id: tenantId,
          chain,
          event_type: e.type,
          body: JSON.stringify({
            type: e.type,
            timestamp: createdAt,
            data: {
              tenantId,
              ...(chain !== TENANT_CHAIN ? { taskId: chain, entityId } : {}),
              ...thinData(e.payload)
            }
          }),
          created_ms: nowMs,
          state: "pending",
          attempts: 0,
          // Only the chain's head is due; the rest wait for it (promoted in order).
          next_attempt_ms: head === undefined && i === 0 ? nowMs : null
      }))
      if (!Arr.isReadonlyArrayNonEmpty(rows)) continue
      yield* sql`INSERT INTO webhook_messages ${sql.insert(rows)}`
      queued += matching.length
    }
    if (queued === 0) return
    // Sent at the commit (never for a rolled-back transaction): every replica's deliverer wakes.
    yield* sql.onDialectOrElse({
      pg: () => Effect.asVoid(sql`SELECT pg_notify(${WEBHOOKS_CHANNEL}, '')`),
      orElse: () => Effect.void
    })
    yield* Effect.sync(wakeLocal)
  })
