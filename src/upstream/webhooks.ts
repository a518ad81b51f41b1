/**
 * Outbound webhook subscriptions (Standard Webhooks 1.0): a tenant's receivers of the gateway's
 * own timeline events, managed on the admin listener. Every operation names the tenant by slug
 * (`tenant`); a subscription of another tenant answers 404 exactly like a missing one. Served by
 * the embedded workspace only, through `WorkspaceExtras` (501 elsewhere).
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { intBetween } from "../api/decimalInt.js"
import { closed } from "../api/dtos.js"
import { BadRequestWire, NotFoundWire } from "../api/errors.js"
import { Timestamp, Uuid, withUuidFolded } from "../api/ids.js"
import { optional } from "../api/optional.js"
import { NotImplementedWire } from "./errors.js"
import { NonEmpty, StoredText, WorkspaceErrors } from "./paths.js"

/**
 * The event types a subscription may name: every type the gateway writes to a timeline (each is
 * sent to subscriptions naming no types, so each must be nameable too). `task.waiting` (a step
 * became current and waits for a person or an agent) and the tenant-level `gl.connected` /
 * `gl.disconnected` are sent like the timeline's own types.
 */
export const WEBHOOK_EVENT_TYPES = [
  "task.created",
  "task.waiting",
  "step.claimed",
  "step.released",
  "step.completed",
  "task.status_changed",
  "row.edited",
  "row.rejected",
  "row.resolved",
  "file.stored",
  "data.ingested",
  "source.submitted",
  "gl.connected",
  "gl.disconnected"
] as const

/** What a task.waiting event's `data` holds (the published description of createWebhook says it). */
export const TASK_WAITING_DATA =
  "task.waiting's data: `tenantId`, `taskId`, `entityId`, `stepId`, `title`, `component`, `assignees` (people and " +
  "`group:<name>`), `dueAt?`, `agentId?`, `consoleUrl?` (with SVC_PUBLIC_URL) and `links?`: with SVC_PUBLIC_URL, " +
  "for an APPROVAL step naming people, one `{actor, approveUrl, rejectUrl, expiresAt}` per named person (not a " +
  "group, not an agent; at most 20): decision links that decide once, as that person, under the step's rules, for " +
  "72 hours. Made at the message's first attempt and stored with it: every retry and resend carries the same links."

/** A receiver URL's longest accepted form. */
export const WEBHOOK_URL_MAX = 2048

const EventType = Schema.String.check(
  Schema.makeFilter((s) =>
    (WEBHOOK_EVENT_TYPES as ReadonlyArray<string>).includes(s) ||
    `unknown event type ${JSON.stringify(s.slice(0, 64))}; known: ${WEBHOOK_EVENT_TYPES.join(", ")}`
  )
).annotate({ description: `One of ${WEBHOOK_EVENT_TYPES.join(", ")}` })

const TenantSlug = NonEmpty(128).annotate({ description: "The tenant's slug" })

export const CreateWebhookDto = Schema.Struct({
  tenant: TenantSlug,
  url: StoredText(WEBHOOK_URL_MAX).annotate({
    description: "The receiver: an http(s) URL without credentials. Private, loopback and link-local addresses are " +
      "refused when connecting unless host:port is in SVC_WEBHOOK_URL_ALLOW"
  }),
  events: optional(
    Schema.Array(EventType).check(Schema.isMinLength(1), Schema.isMaxLength(WEBHOOK_EVENT_TYPES.length * 2)).annotate({
      description: "Only these event types; every type when absent"
    })
  ),
  description: optional(StoredText(512))
}).pipe(closed("CreateWebhookDto"))
export type CreateWebhookDto = typeof CreateWebhookDto.Type

export const Webhook = Schema.Struct({
  id: Uuid,
  tenantId: Uuid,
  url: Schema.String,
  events: Schema.NullOr(Schema.Array(Schema.String)).annotate({ description: "null: every event type" }),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  disabledReason: Schema.NullOr(Schema.String).annotate({
    description: "Why it is disabled: by an operator, a 410 from the receiver, or failing for SVC_WEBHOOK_DISABLE_AFTER_MS"
  }),
  failingSince: Schema.NullOr(Timestamp).annotate({ description: "First failed attempt since the last success" }),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ identifier: "Webhook", description: "A webhook subscription; never carries its secret" })
export type Webhook = typeof Webhook.Type

export const CreatedWebhook = Schema.Struct({
  ...Webhook.fields,
  secret: Schema.String.annotate({
    description: "The signing secret, `whsec_` + base64 of 32 random bytes: shown only here and by rotate-secret"
  }),
  consoleUrlBase: Schema.NullOr(Schema.String).annotate({
    description: "The base of the `consoleUrl` and of the decision links (`links`) task.waiting events carry (the " +
      "server's SVC_PUBLIC_URL); null when that is not set, and then neither is sent"
  })
}).annotate({ identifier: "CreatedWebhook" })
export type CreatedWebhook = typeof CreatedWebhook.Type

export const RotatedWebhookSecret = Schema.Struct({
  id: Uuid,
  secret: Schema.String.annotate({ description: "The new signing secret, shown only here" }),
  previousSecretValidUntil: Timestamp.annotate({
    description: "Until then every delivery carries a signature with the old secret as well"
  })
}).annotate({ identifier: "RotatedWebhookSecret" })
export type RotatedWebhookSecret = typeof RotatedWebhookSecret.Type

export const WebhookAttempt = Schema.Struct({
  deliveryId: Schema.String.annotate({ description: "The message's `webhook-id`, the same on every attempt" }),
  eventType: Schema.String,
  attemptedAt: Timestamp,
  statusCode: Schema.NullOr(Schema.Number).annotate({ description: "The receiver's status; null when none came" }),
  error: Schema.NullOr(Schema.String),
  durationMs: Schema.Number,
  outcome: Schema.Literals(["delivered", "retrying", "failed"]).annotate({
    description: "delivered (2xx); retrying (another attempt is scheduled); failed (no more attempts)"
  })
}).annotate({ identifier: "WebhookAttempt" })
export type WebhookAttempt = typeof WebhookAttempt.Type

export const WebhookDelivery = Schema.Struct({
  deliveryId: Schema.String,
  eventType: Schema.String,
  state: Schema.Literals(["pending", "delivered", "failed"]),
  attempts: Schema.Number
}).annotate({ identifier: "WebhookDelivery" })
export type WebhookDelivery = typeof WebhookDelivery.Type

const TenantQuery = Schema.Struct({ tenant: TenantSlug })
// Path text as the store keeps it (no NUL, no lone surrogate): such a path never decodes anyway
// (400 for its percent-encoding), and the published document then says so.
const WebhookPath = Schema.Struct({ id: withUuidFolded(StoredText(512).annotate({ description: "Subscription UUID" })) })
const Errors = [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire] as const

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("createWebhook", "/webhooks", {
      payload: CreateWebhookDto,
      success: CreatedWebhook.pipe(HttpApiSchema.status(201)),
      error: Errors
    })
      .annotate(OpenApi.Summary, "Subscribe a receiver to the tenant's events")
      .annotate(
        OpenApi.Description,
        "Creates an enabled subscription and its signing secret (returned once). Deliveries are Standard Webhooks " +
          "1.0: headers webhook-id, webhook-timestamp, webhook-signature; body `{type, timestamp, data}`. " +
          TASK_WAITING_DATA
      )
  )
  .add(
    HttpApiEndpoint.get("listWebhooks", "/webhooks", { query: TenantQuery, success: Schema.Array(Webhook), error: Errors })
      .annotate(OpenApi.Summary, "List the tenant's subscriptions")
      .annotate(OpenApi.Description, "Every subscription of the tenant, oldest first; secrets are never shown.")
  )
  .add(
    HttpApiEndpoint.get("getWebhook", "/webhooks/:id", { params: WebhookPath, query: TenantQuery, success: Webhook, error: Errors })
      .annotate(OpenApi.Summary, "Get a subscription")
      .annotate(OpenApi.Description, "One subscription of the tenant; 404 for an unknown one or another tenant's.")
  )
  .add(
    HttpApiEndpoint.delete("deleteWebhook", "/webhooks/:id", {
      params: WebhookPath,
      query: TenantQuery,
      success: HttpApiSchema.NoContent,
      error: Errors
    })
      .annotate(OpenApi.Summary, "Remove a subscription")
      .annotate(OpenApi.Description, "Removes the subscription, its undelivered messages and its deliveries log.")
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookSecret", "/webhooks/:id/rotate-secret", {
      params: WebhookPath,
      query: TenantQuery,
      success: RotatedWebhookSecret,
      error: Errors
    })
      .annotate(OpenApi.Summary, "Replace the signing secret")
      .annotate(
        OpenApi.Description,
        "A new secret, returned once. For 24 hours every delivery is signed with both the new and the old secret."
      )
  )
  .add(
    HttpApiEndpoint.post("enableWebhook", "/webhooks/:id/enable", {
      params: WebhookPath,
      query: TenantQuery,
      success: Webhook,
      error: Errors
    })
      .annotate(OpenApi.Summary, "Enable a subscription")
      .annotate(OpenApi.Description, "Deliveries waiting for it resume, in order, and its failing clock starts again.")
  )
  .add(
    HttpApiEndpoint.post("disableWebhook", "/webhooks/:id/disable", {
      params: WebhookPath,
      query: TenantQuery,
      success: Webhook,
      error: Errors
    })
      .annotate(OpenApi.Summary, "Disable a subscription")
      .annotate(OpenApi.Description, "No attempts are made while disabled; new events are not queued for it.")
  )
  .add(
    HttpApiEndpoint.get("listWebhookDeliveries", "/webhooks/:id/deliveries", {
      params: WebhookPath,
      query: Schema.Struct({
        tenant: TenantSlug,
        limit: Schema.optionalKey(intBetween(1, 1000))
      }),
      success: Schema.Array(WebhookAttempt),
      error: Errors
    })
      .annotate(OpenApi.Summary, "The subscription's deliveries log")
      .annotate(
        OpenApi.Description,
        "Its delivery attempts, newest first (`limit`, default 50): time, event, the receiver's status or the " +
          "error, duration, and whether another attempt follows."
      )
  )
  .add(
    HttpApiEndpoint.post("resendWebhookDelivery", "/webhooks/deliveries/:deliveryId/resend", {
      params: Schema.Struct({ deliveryId: StoredText(64).annotate({ description: "A delivery's webhook-id (msg_...)" }) }),
      query: TenantQuery,
      success: WebhookDelivery.pipe(HttpApiSchema.status(202)),
      error: Errors
    })
      .annotate(OpenApi.Summary, "Send a delivery again")
      .annotate(
        OpenApi.Description,
        "Queues the message again with the same webhook-id and body (the receiver's idempotency key) and a fresh " +
          "retry schedule, after any earlier pending message of its task. 400 while its subscription is disabled."
      )
  )
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(
    OpenApi.Description,
    "Outbound webhook subscriptions of a tenant (Standard Webhooks 1.0). Served by the embedded workspace; a " +
      "server without them answers 501."
  )
{}
