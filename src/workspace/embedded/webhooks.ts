/**
 * Webhook subscriptions in the workspace database (every replica shares them), served on the
 * admin listener (../../upstream/webhooks.ts). Every operation names the tenant by slug; a
 * subscription of another tenant answers 404 like a missing one. The signing secret is shown on
 * create and rotate only; after a rotation the old one keeps signing beside the new one for 24
 * hours (Standard Webhooks: several signatures in one header).
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomBytes, randomUUID } from "node:crypto"
import { BadRequest, NotFound } from "../../api/errors.js"
import { isUuid } from "../../api/ids.js"
import type { WebhookSubscriptions } from "../../upstream/extras.js"
import { type CreatedWebhook, type CreateWebhookDto, type Webhook, type WebhookAttempt, WEBHOOK_URL_MAX } from "../../upstream/webhooks.js"
import { guard, nowIso } from "./db.js"
import { chainLock } from "./webhookOutbox.js"

/** Subscriptions one tenant may have: each event is queued once per subscription, in the change's transaction. */
export const MAX_SUBSCRIPTIONS_PER_TENANT = 50

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

/**
 * The most secrets that sign one attempt: the current one and up to three replaced ones still in
 * their overlap. Rotating more often than that within a day ends the oldest early (bounded headers).
 */
export const MAX_SIGNING_SECRETS = 4

/** The replaced secrets a row keeps, newest first, with when each stops signing. */
type OlderSecrets = ReadonlyArray<readonly [secret: string, untilMs: number]>

const olderOf = (text: string | null | undefined): OlderSecrets => {
  if (text == null) return []
  try {
    const v = JSON.parse(text) as unknown
    return Array.isArray(v)
      ? v.filter((e): e is [string, number] => Array.isArray(e) && typeof e[0] === "string" && typeof e[1] === "number")
      : []
  } catch {
    return []
  }
}

/** A subscription's secrets as stored: the current one, the last replaced one, and those before it. */
export interface StoredSecrets {
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_until_ms: number | string | null
  readonly older_secrets?: string | null | undefined
}

/** The replaced secrets still in their overlap at `nowMs`, newest first: the previous one, then those before it. */
const stillSigning = (row: StoredSecrets, nowMs: number): OlderSecrets =>
  [
    ...(row.previous_secret !== null ? [[row.previous_secret, Number(row.previous_until_ms ?? 0)] as const] : []),
    ...olderOf(row.older_secrets)
  ].filter(([, until]) => until > nowMs)

/** Every secret that signs an attempt at `nowMs`: the current one first, then replaced ones still in their overlap. */
export const signingSecrets = (row: StoredSecrets, nowMs: number): ReadonlyArray<string> =>
  [row.secret, ...stillSigning(row, nowMs).map(([s]) => s)].slice(0, MAX_SIGNING_SECRETS)

/**
 * The replaced secrets before the previous one, after a rotation at `nowMs`: the previous one joins
 * them while it still signs (a second rotation within the overlap keeps the first one's promise).
 */
const olderAfterRotation = (row: StoredSecrets, nowMs: number): string | null => {
  const kept = stillSigning(row, nowMs).slice(0, MAX_SIGNING_SECRETS - 2)
  return kept.length === 0 ? null : JSON.stringify(kept)
}

/** `whsec_` + base64 of 32 random bytes (Standard Webhooks asks for 24 to 64). */
export const newWebhookSecret = () => `whsec_${randomBytes(32).toString("base64")}`

export interface SubscriptionRow {
  readonly id: string
  readonly tenant_id: string
  readonly url: string
  readonly events: string | null
  readonly description: string | null
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_until_ms: number | string | null
  readonly older_secrets?: string | null
  readonly enabled: number | string
  readonly disabled_reason: string | null
  readonly failing_since_ms: number | string | null
  readonly created_at: string
  readonly updated_at: string
}

export const webhookOfRow = (r: SubscriptionRow): Webhook => ({
  id: r.id,
  tenantId: r.tenant_id,
  url: r.url,
  events: r.events === null ? null : (JSON.parse(r.events) as Array<string>),
  description: r.description,
  enabled: Number(r.enabled) === 1,
  disabledReason: r.disabled_reason,
  failingSince: r.failing_since_ms === null ? null : new Date(Number(r.failing_since_ms)).toISOString(),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const bad = (message: string) => Effect.fail(new BadRequest({ message }))

/**
 * A receiver URL: absolute http(s), no credentials (they would sit in the database and in logs;
 * the signature authenticates the sender). Where it may connect is decided at connect time.
 */
export const checkReceiverUrl = (raw: string): Effect.Effect<string, BadRequest> => {
  let u: URL
  try {
    u = new URL(raw)
  } catch {
    return bad("url: not a valid absolute URL")
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") {
    return bad(`url: scheme "${u.protocol.replace(/:$/, "").slice(0, 32)}" is refused; only http and https are allowed`)
  }
  if (u.username !== "" || u.password !== "") return bad("url: credentials in the URL are refused")
  // An empty fragment (`…/x#`) reads as no hash, and would be stored with its `#`.
  if (u.hash !== "" || u.href.endsWith("#")) return bad("url: a fragment (#...) is never sent; leave it out")
  if (u.port === "0") return bad("url: port 0 cannot be connected to")
  // Stored and sent as normalized: non-ASCII percent-encoded (a path of 1,000 emoji is 12,018 characters).
  if (u.href.length > WEBHOOK_URL_MAX) {
    return bad(`url: ${u.href.length} characters once normalized (non-ASCII percent-encoded); at most ${WEBHOOK_URL_MAX}`)
  }
  return Effect.succeed(u.href)
}

/** The lock a tenant's subscription count is taken under until the transaction ends (PostgreSQL). */
const subscriptionsLock = (sql: SqlClient.SqlClient, tenantId: string) =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-subscriptions:${tenantId}`}::text, 0))`),
    orElse: () => Effect.void
  })

/** Stops a chain's waiting messages (a disabled subscription gets no attempts). */
const park = (sql: SqlClient.SqlClient, subscriptionId: string) =>
  sql`UPDATE webhook_messages SET next_attempt_ms = NULL
    WHERE subscription_id = ${subscriptionId} AND state = 'pending' AND claimed_by IS NULL`

/** Makes each chain's first pending message, in the chain's (`tx`, `id`) order, due now (after enable, resend). */
export const promoteHeads = (sql: SqlClient.SqlClient, subscriptionId: string, nowMs: number) =>
  sql`UPDATE webhook_messages SET next_attempt_ms = ${nowMs}
    WHERE subscription_id = ${subscriptionId} AND state = 'pending' AND next_attempt_ms IS NULL AND claimed_by IS NULL
      AND NOT EXISTS (SELECT 1 FROM webhook_messages e WHERE e.subscription_id = ${subscriptionId}
        AND e.chain = webhook_messages.chain AND e.state = 'pending' AND (e.tx, e.id) < (webhook_messages.tx, webhook_messages.id))`

/** Disables a subscription with its reason, parking what waits for it. */
export const disableSubscription = (sql: SqlClient.SqlClient, subscriptionId: string, reason: string) =>
  Effect.andThen(
    sql`UPDATE webhook_subscriptions SET enabled = 0, disabled_reason = ${reason}, updated_at = ${nowIso()}
      WHERE id = ${subscriptionId} AND enabled = 1`,
    park(sql, subscriptionId)
  )

/** `publicUrl`: SVC_PUBLIC_URL when the operator set it (task.waiting's console URL), None otherwise. */
export const makeWebhookSubscriptions = (publicUrl: Option.Option<string>) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const consoleUrlBase = Option.getOrNull(Option.map(publicUrl, (u) => u.replace(/\/+$/, "")))

  const tenantOf = (slug: string) =>
    Effect.flatMap(sql<{ id: string }>`SELECT id FROM tenants WHERE slug = ${slug}`, ([t]) =>
      t === undefined ? bad(`tenant: unknown tenant "${slug.slice(0, 64)}"`) : Effect.succeed(t.id))

  const rowOf = (tenant: string, id: string) =>
    Effect.gen(function*() {
      const tenantId = yield* tenantOf(tenant)
      const [row] = isUuid(id)
        ? yield* sql<SubscriptionRow>`SELECT * FROM webhook_subscriptions WHERE id = ${id} AND tenant_id = ${tenantId}`
        : []
      if (row === undefined) return yield* Effect.fail(new NotFound({ message: `Webhook subscription ${id.slice(0, 64)} not found` }))
      return row
    })

  const create = (input: CreateWebhookDto) =>
    Effect.gen(function*() {
      const tenantId = yield* tenantOf(input.tenant)
      const url = yield* checkReceiverUrl(input.url)
      // Counted and inserted under one lock of the tenant's subscriptions (PostgreSQL): apart, 120
      // creates at once on two replicas left 88-108. SQLite's writes are serial.
      yield* subscriptionsLock(sql, tenantId)
      const [count] = yield* sql<{ n: number | string }>`SELECT COUNT(*) AS n FROM webhook_subscriptions WHERE tenant_id = ${tenantId}`
      if (Number(count?.n ?? 0) >= MAX_SUBSCRIPTIONS_PER_TENANT) {
        return yield* bad(`tenant: ${input.tenant} already has ${MAX_SUBSCRIPTIONS_PER_TENANT} webhook subscriptions, the most one tenant may have; remove one first`)
      }
      const now = nowIso()
      const secret = newWebhookSecret()
      const events = input.events === undefined ? null : [...new Set(input.events)]
      const row: SubscriptionRow = {
        id: randomUUID(),
        tenant_id: tenantId,
        url,
        events: events === null ? null : JSON.stringify(events),
        description: input.description ?? null,
        secret,
        previous_secret: null,
        previous_until_ms: null,
        enabled: 1,
        disabled_reason: null,
        failing_since_ms: null,
        created_at: now,
        updated_at: now
      }
      yield* sql`INSERT INTO webhook_subscriptions ${sql.insert({ ...row })}`
      return { ...webhookOfRow(row), secret, consoleUrlBase } satisfies CreatedWebhook
    }).pipe(sql.withTransaction, guard("createWebhook"))

  const list = (tenant: string) =>
    Effect.flatMap(tenantOf(tenant), (tenantId) =>
      Effect.map(
        sql<SubscriptionRow>`SELECT * FROM webhook_subscriptions WHERE tenant_id = ${tenantId} ORDER BY created_at, id`,
        (rows) => rows.map(webhookOfRow)
      )).pipe(guard("listWebhooks"))

  const get = (tenant: string, id: string) => Effect.map(rowOf(tenant, id), webhookOfRow).pipe(guard("getWebhook"))

  const remove = (tenant: string, id: string) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* rowOf(tenant, id)
      yield* sql`DELETE FROM webhook_attempts WHERE subscription_id = ${id}`
      yield* sql`DELETE FROM webhook_messages WHERE subscription_id = ${id}`
      yield* sql`DELETE FROM webhook_subscriptions WHERE id = ${id}`
    })).pipe(guard("deleteWebhook"))

  const rotateSecret = (tenant: string, id: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const row = yield* rowOf(tenant, id)
      const secret = newWebhookSecret()
      const now = Date.now()
      const until = now + ROTATION_OVERLAP_MS
      yield* sql`UPDATE webhook_subscriptions SET secret = ${secret}, previous_secret = ${row.secret},
        previous_until_ms = ${until}, older_secrets = ${olderAfterRotation(row, now)}, updated_at = ${nowIso()} WHERE id = ${id}`
      return { id, secret, previousSecretValidUntil: new Date(until).toISOString() }
    })).pipe(guard("rotateWebhookSecret"))

  const setEnabled = (tenant: string, id: string, enabled: boolean) =>
    sql.withTransaction(Effect.gen(function*() {
      const row = yield* rowOf(tenant, id)
      if (enabled && Number(row.enabled) !== 1) {
        yield* sql`UPDATE webhook_subscriptions SET enabled = 1, disabled_reason = NULL, failing_since_ms = NULL,
          updated_at = ${nowIso()} WHERE id = ${id}`
        yield* promoteHeads(sql, id, Date.now())
      } else if (!enabled && Number(row.enabled) === 1) {
        yield* disableSubscription(sql, id, "disabled by an operator")
      }
      const [after] = yield* sql<SubscriptionRow>`SELECT * FROM webhook_subscriptions WHERE id = ${id}`
      return webhookOfRow(after!)
    })).pipe(guard(enabled ? "enableWebhook" : "disableWebhook"))

  const deliveries = (tenant: string, id: string, limit: number) =>
    Effect.gen(function*() {
      yield* rowOf(tenant, id)
      const rows = yield* sql<{
        webhook_id: string
        event_type: string
        attempted_at: string
        status_code: number | string | null
        error: string | null
        duration_ms: number | string
        outcome: string
      }>`SELECT m.webhook_id, m.event_type, a.attempted_at, a.status_code, a.error, a.duration_ms, a.outcome
        FROM webhook_attempts a JOIN webhook_messages m ON m.id = a.message_id
        WHERE a.subscription_id = ${id} ORDER BY a.id DESC LIMIT ${Math.max(1, Math.min(1000, Math.floor(limit)))}`
      return rows.map((r): WebhookAttempt => ({
        deliveryId: r.webhook_id,
        eventType: r.event_type,
        attemptedAt: r.attempted_at,
        statusCode: r.status_code === null ? null : Number(r.status_code),
        error: r.error,
        durationMs: Number(r.duration_ms),
        outcome: r.outcome === "delivered" ? "delivered" : r.outcome === "retrying" ? "retrying" : "failed"
      }))
    }).pipe(guard("listWebhookDeliveries"))

  const resend = (tenant: string, deliveryId: string) =>
    sql.withTransaction(Effect.gen(function*() {
      const tenantId = yield* tenantOf(tenant)
      const [m] = yield* sql<{
        id: number | string
        subscription_id: string
        chain: string
        event_type: string
        state: string
        enabled: number | string
      }>`SELECT m.id, m.subscription_id, m.chain, m.event_type, m.state, s.enabled
        FROM webhook_messages m JOIN webhook_subscriptions s ON s.id = m.subscription_id
        WHERE m.webhook_id = ${deliveryId} AND m.tenant_id = ${tenantId}`
      if (m === undefined) return yield* Effect.fail(new NotFound({ message: `Delivery ${deliveryId.slice(0, 64)} not found` }))
      if (Number(m.enabled) !== 1) return yield* bad(`Delivery ${deliveryId}: its subscription is disabled; enable it first`)
      if (m.state !== "pending") {
        yield* chainLock(sql, m.subscription_id, m.chain)
        const [head] = yield* sql<{ id: number }>`SELECT id FROM webhook_messages
          WHERE subscription_id = ${m.subscription_id} AND chain = ${m.chain} AND state = 'pending'
            AND (tx, id) < (SELECT tx, id FROM webhook_messages WHERE id = ${m.id}) LIMIT 1`
        // A fresh schedule; due now unless an earlier message of its task still waits (then after it).
        yield* sql`UPDATE webhook_messages SET state = 'pending', attempts = 0, finished_ms = NULL, claimed_by = NULL,
          claimed_until_ms = NULL, next_attempt_ms = ${head === undefined ? Date.now() : null} WHERE id = ${m.id}`
        // A later message of the chain that was due now waits behind this one again.
        if (head === undefined) {
          yield* sql`UPDATE webhook_messages SET next_attempt_ms = NULL WHERE subscription_id = ${m.subscription_id}
            AND chain = ${m.chain} AND state = 'pending' AND (tx, id) > (SELECT tx, id FROM webhook_messages WHERE id = ${m.id})
            AND claimed_by IS NULL`
        }
      } else {
        // Retrying (a failed attempt, the next one minutes or hours away): due now, on a fresh
        // schedule, as a receiver that was just fixed expects; before, this answered and sent
        // nothing until its backoff ran out. In flight (leased) or waiting behind an earlier
        // message of its task (no due time): left as it is, it is sent as soon as it may be.
        yield* sql`UPDATE webhook_messages SET attempts = 0, next_attempt_ms = ${Date.now()}
          WHERE id = ${m.id} AND state = 'pending' AND claimed_by IS NULL AND next_attempt_ms IS NOT NULL
          AND next_attempt_ms > ${Date.now()}`
      }
      const [after] = yield* sql<{ state: string; attempts: number | string }>`SELECT state, attempts FROM webhook_messages WHERE id = ${m.id}`
      return {
        deliveryId,
        eventType: m.event_type,
        state: "pending" as const,
        attempts: Number(after?.attempts ?? 0)
      }
    })).pipe(guard("resendWebhookDelivery"))

  const service: WebhookSubscriptions = { create, list, get, remove, rotateSecret, setEnabled, deliveries, resend }
  return service
})
