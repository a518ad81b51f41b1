/**
 * webhooks add / list / remove / rotate-secret / deliveries / resend / enable / disable: a
 * tenant's outbound webhook subscriptions on the admin listener (--admin-url, SVC_ADMIN_TOKEN),
 * each naming the tenant with --tenant <slug>.
 */
import * as Argument from "effect/cli/Argument"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isUuid } from "../../api/ids.js"
import { CreateWebhookDto, type Webhook, type WebhookAttempt, WEBHOOK_EVENT_TYPES } from "../../client/registry.js"
import { checkPayload, fields, group, integerFlag, line, note, quoted, registryCommand, table, usage } from "../common.js"

const tenantFlag = Flag.String("tenant").pipe(Flag.withDescription("The tenant's slug"))

const subscriptionArg = Argument.String("subscriptionId").pipe(
  Argument.filter(isUuid, (s) => `<subscriptionId>: ${quoted(s)} is not a UUID`),
  Argument.withDescription("Subscription id (a UUID, from `svc webhooks list`)")
)

const renderWebhook = (w: Webhook) =>
  fields([
    ["Subscription", w.id],
    ["URL", w.url],
    ["Events", w.events === null ? "every event type" : w.events.join(", ")],
    ["Description", w.description],
    ["Enabled", w.enabled ? "yes" : `no (${w.disabledReason ?? "disabled"})`],
    ["Failing since", w.failingSince],
    ["Created", w.createdAt]
  ])

const add = registryCommand(
  "add",
  "Subscribe a receiver URL to the tenant's events; prints the subscription id and its signing secret once",
  {
    url: Argument.String("url").pipe(Argument.withDescription("The receiver, an http(s) URL")),
    tenant: tenantFlag,
    events: Flag.String("events").pipe(Flag.optional, Flag.withDescription(
      `Comma list of event types (default: all): ${WEBHOOK_EVENT_TYPES.join(", ")}`
    )),
    description: Flag.String("description").pipe(Flag.optional, Flag.withDescription("What the receiver is"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const body: Record<string, unknown> = { tenant: args.tenant, url: args.url }
      if (Option.isSome(args.events)) body.events = args.events.value.split(",").map((s) => s.trim()).filter((s) => s !== "")
      if (Option.isSome(args.description)) body.description = args.description.value
      const payload = yield* checkPayload(CreateWebhookDto, body, "webhooks add")
      const created = yield* ctx.registry.webhooks.createWebhook({ payload })
      if (ctx.json) yield* line(JSON.stringify(created, null, 2))
      else {
        yield* renderWebhook(created)
        yield* fields([["Secret", created.secret]])
      }
      yield* note("WARNING: store the secret now, somewhere safe: it is shown only this once (rotate-secret makes a new one).")
      const waiting = created.events === null || created.events.includes("task.waiting")
      if (waiting && created.consoleUrlBase === null) {
        yield* note(
          "Note: task.waiting events will carry no consoleUrl: the gateway's SVC_PUBLIC_URL is not set, so it " +
            "does not know the address people reach the console at."
        )
      }
    })
)

const list = registryCommand("list", "List the tenant's webhook subscriptions (secrets are never shown)", { tenant: tenantFlag }, (args, ctx) =>
  Effect.flatMap(ctx.registry.webhooks.listWebhooks({ urlParams: { tenant: args.tenant } }), (rows) =>
    ctx.output(rows, (ws) =>
      table([
        ["ID", (w: Webhook) => w.id],
        ["URL", (w: Webhook) => w.url],
        ["EVENTS", (w: Webhook) => (w.events === null ? "*" : w.events.join(","))],
        ["ENABLED", (w: Webhook) => (w.enabled ? "yes" : `no: ${w.disabledReason ?? ""}`)],
        ["FAILING SINCE", (w: Webhook) => w.failingSince]
      ], ws))))

const remove = registryCommand(
  "remove",
  "Remove a subscription, its undelivered messages and its deliveries log",
  { id: subscriptionArg, tenant: tenantFlag },
  ({ id, tenant }, ctx) =>
    Effect.andThen(
      ctx.registry.webhooks.deleteWebhook({ path: { id }, urlParams: { tenant } }),
      ctx.output({ ok: true, id }, () => line(`Removed webhook subscription ${id}`))
    )
)

const rotateSecret = registryCommand(
  "rotate-secret",
  "Replace a subscription's signing secret; for 24 hours deliveries carry both signatures",
  { id: subscriptionArg, tenant: tenantFlag },
  ({ id, tenant }, ctx) =>
    Effect.gen(function*() {
      const rotated = yield* ctx.registry.webhooks.rotateWebhookSecret({ path: { id }, urlParams: { tenant } })
      yield* ctx.output(rotated, (r) =>
        fields([["Subscription", r.id], ["New secret", r.secret], ["Old secret signs until", r.previousSecretValidUntil]]))
      yield* note("WARNING: store the new secret now: it is shown only this once.")
    })
)

const deliveries = registryCommand(
  "deliveries",
  "A subscription's delivery attempts, newest first: time, event, status or error, duration",
  {
    id: subscriptionArg,
    tenant: tenantFlag,
    limit: integerFlag("limit").pipe(Flag.optional, Flag.withDescription("How many (1-1000, default 50)"))
  },
  ({ id, limit, tenant }, ctx) =>
    Effect.gen(function*() {
      if (Option.isSome(limit) && (limit.value < 1 || limit.value > 1000)) return yield* usage("--limit: must be 1-1000")
      const attempts = yield* ctx.registry.webhooks.listWebhookDeliveries({
        path: { id },
        urlParams: Option.isSome(limit) ? { tenant, limit: limit.value } : { tenant }
      })
      yield* ctx.output(attempts, (rows) =>
        table([
          ["TIME", (a: WebhookAttempt) => a.attemptedAt],
          ["DELIVERY", (a: WebhookAttempt) => a.deliveryId],
          ["EVENT", (a: WebhookAttempt) => a.eventType],
          ["RESULT", (a: WebhookAttempt) => (a.statusCode !== null ? String(a.statusCode) : a.error)],
          ["MS", (a: WebhookAttempt) => a.durationMs],
          ["OUTCOME", (a: WebhookAttempt) => (a.outcome === "delivered" || a.error === null ? a.outcome : `${a.outcome}: ${a.error}`)]
        ], rows))
    })
)

const resend = registryCommand(
  "resend",
  "Send a delivery again (same webhook-id and body, a fresh retry schedule)",
  {
    deliveryId: Argument.String("deliveryId").pipe(Argument.withDescription("The delivery's id (msg_..., from `deliveries`)")),
    tenant: tenantFlag
  },
  ({ deliveryId, tenant }, ctx) =>
    Effect.flatMap(ctx.registry.webhooks.resendWebhookDelivery({ path: { deliveryId }, urlParams: { tenant } }), (d) =>
      ctx.output(d, () => line(`Queued ${d.deliveryId} (${d.eventType}) again`)))
)

const toggle = (name: "enable" | "disable") =>
  registryCommand(
    name,
    name === "enable"
      ? "Enable a subscription: what waits for it is delivered, in order"
      : "Disable a subscription: no attempts, no new messages for it",
    { id: subscriptionArg, tenant: tenantFlag },
    ({ id, tenant }, ctx) =>
      Effect.flatMap(
        name === "enable"
          ? ctx.registry.webhooks.enableWebhook({ path: { id }, urlParams: { tenant } })
          : ctx.registry.webhooks.disableWebhook({ path: { id }, urlParams: { tenant } }),
        (w) => ctx.output(w, renderWebhook)
      )
  )

export const webhooks = group(
  "webhooks",
  "The tenant's outbound webhook subscriptions, on the admin listener (--admin-url / SVC_ADMIN_URL; SVC_ADMIN_TOKEN sent as bearer token)",
  [add, list, remove, rotateSecret, deliveries, resend, toggle("enable"), toggle("disable")]
)
