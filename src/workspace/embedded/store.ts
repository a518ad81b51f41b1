/**
 * The embedded workspace: the WorkspaceClient port on SQLite (@effect/sql-libsql) or PostgreSQL,
 * the one implementation that holds the port's rules (the tests run on it too). One module per kind of
 * record (./tenants.ts, ./tasks.ts, ./events.ts, ./documents.ts, ./data.ts, ./subledgers.ts,
 * ./gl.ts, ./agents.ts) over the helpers they share (./transaction.ts); here they are put together.
 *
 * Writes that a signal follows (documents, data batches, approve/reject, row actions) store
 * the write and its signal rows in one transaction; after the commit the outbox delivers
 * them (./outbox.ts). What a caller must hear about (404, 400 with currentStatus, INVALID_FIELD)
 * is checked inside that transaction, before anything is recorded, with the same rules the
 * engine applies on delivery.
 */
import * as Effect from "effect/Effect"
import { BadRequest, type Conflict, type NotFound } from "../../api/errors.js"
import type { WorkspaceClientService, WsEffect } from "../../upstream/WorkspaceClient.js"
import {
  type Agent,
  type AgentVersion,
  type CreateAgentInput,
  type CreateAgentVersionInput,
  type CreatedAgent,
  makeAgentRegistry
} from "./agents.js"
import { dataRecords } from "./data.js"
import { makeDocumentRecords } from "./documents.js"
import { eventRecords } from "./events.js"
import { glRecords, type GlSessions } from "./gl.js"
import { inboxRecords } from "./inbox.js"
import type { DeliveryReport, RelayOptions } from "./outbox.js"
import { subledgerRecords } from "./subledgers.js"
import { taskRecords } from "./tasks.js"
import { tenantRecords } from "./tenants.js"
import { makeTransactions } from "./transaction.js"
import { type DecisionLinkStore, linkTtlOf, makeDecisionLinkStore } from "./links.js"
import type { CreateDecisionLinksDto, DecisionLinks, RevokeDecisionLinksDto, RevokedDecisionLinks } from "../../upstream/links.js"
import * as Option from "effect/Option"
import { DEFAULT_GL_SESSION_TTL_MS } from "../../domain/glServices.js"
import type { WebhookSubscriptions } from "../../upstream/extras.js"
import { makeWebhookDeliverer, type WebhookDeliveryOptions } from "./webhookDelivery.js"
import { makeWebhookSubscriptions } from "./webhooks.js"

export type { GlSession } from "./gl.js"

/** The port plus what the workspace HTTP API serves beyond it: GL webhook, agent registry, outbox. */
export interface EmbeddedWorkspace extends WorkspaceClientService, GlSessions, DecisionLinkStore {
  /** `svc links create` (the admin listener): the tenant by slug, the duration as ISO 8601 text. */
  readonly createDecisionLinksFor: (input: CreateDecisionLinksDto) => WsEffect<DecisionLinks, NotFound | BadRequest | Conflict>
  /** `svc links revoke`. */
  readonly revokeDecisionLinksFor: (input: RevokeDecisionLinksDto) => WsEffect<RevokedDecisionLinks, NotFound | BadRequest>
  readonly createAgent: (input: CreateAgentInput) => WsEffect<CreatedAgent, BadRequest | Conflict>
  readonly listAgents: (tenantId?: string) => WsEffect<ReadonlyArray<Agent>>
  readonly getAgent: (id: string) => WsEffect<Agent, NotFound>
  readonly deleteAgent: (id: string) => WsEffect<void, NotFound>
  readonly createAgentVersion: (id: string, input: CreateAgentVersionInput) => WsEffect<AgentVersion, NotFound | BadRequest | Conflict>
  /** The agent holding this API key; NotFound for an unknown key (the caller answers 401). */
  readonly authenticateAgent: (apiKey: string) => WsEffect<Agent, NotFound>
  /** Delivers pending outbox signals now (the relay also does, in the background). */
  readonly deliverPending: (options?: { readonly force?: boolean }) => Effect.Effect<DeliveryReport>
  /** The outbox relay: delivers signals in the background until interrupted (the layer forks it). */
  readonly relay: Effect.Effect<never>
  /** Outbound webhook subscriptions (the admin listener serves them). */
  readonly webhooks: WebhookSubscriptions
  /** The webhook deliverer: sends queued webhook messages until interrupted (the layer forks it). */
  readonly webhookDeliverer: Effect.Effect<never>
}

export interface EmbeddedOptions {
  /** Base URL of the process serving the GL connect page, for connect-session URLs. */
  readonly publicUrl?: string | undefined
  /** A connect session older than this can no longer be opened or completed; default 15 minutes. */
  readonly glSessionTtlMs?: number | undefined
  /** Batching, concurrency and waits of signal delivery (./outbox.ts). */
  readonly relay?: RelayOptions | undefined
  /** How long a step-bound write waits after its arrival (./transaction.ts); unset: by dialect. */
  readonly decisionSettleMs?: number | undefined
  /** SVC_PUBLIC_URL only when the operator set it: decision links are made under it, and none without it. */
  readonly explicitPublicUrl?: Option.Option<string> | undefined
  /** SVC_LINK_SIGNING_KEYS (the first signs, all verify); unset: a key generated once into the database. */
  readonly linkSigningKeys?: Option.Option<ReadonlyArray<string>> | undefined
  /** The tenant whose gateway this process is (SVC_TENANT_SLUG): task.waiting links are made for it only. */
  readonly linkTenantSlug?: string | undefined
  /** Why this process makes no decision links (the standalone workspace service serves no link page). */
  readonly linksUnavailable?: string | undefined
  /** Retry schedule, timeout, allow-list, concurrency of webhook delivery (./webhookDelivery.ts). */
  readonly webhooks?: WebhookDeliveryOptions | undefined
}

export const makeEmbeddedWorkspaceWith = (options: EmbeddedOptions = {}) =>
  Effect.gen(function*() {
    const tx = yield* makeTransactions(options.relay, options.decisionSettleMs)
    const agents = yield* makeAgentRegistry
    const publicUrl = (options.publicUrl ?? "http://127.0.0.1:3000").replace(/\/$/, "")
    // Sessions created before the cutoff (ISO text, as created_at is) have expired: they name nothing.
    const glSessionTtlMs = options.glSessionTtlMs ?? DEFAULT_GL_SESSION_TTL_MS
    const tenants = tenantRecords(tx)
    const tasks = taskRecords(tx)
    const links = yield* makeDecisionLinkStore(tasks, {
      publicUrl: options.explicitPublicUrl ?? Option.none(),
      signingKeys: options.linkSigningKeys ?? Option.none(),
      unavailable: options.linksUnavailable,
      boundTenantSlug: options.linkTenantSlug
    })
    const tenantBySlug = (slug: string) =>
      tenants.resolveTenant(slug).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new BadRequest({ message: `tenantSlug: unknown tenant "${slug.slice(0, 64)}"` })))
      )
    const service: EmbeddedWorkspace = {
      ...tenants,
      ...tasks,
      ...links,
      createDecisionLinksFor: (input) =>
        Effect.gen(function*() {
          const tenant = yield* tenantBySlug(input.tenantSlug)
          const expiresInMs = yield* linkTtlOf(input.expiresIn)
          return yield* links.createDecisionLinks({ tenantId: tenant.id, taskId: input.taskId, actor: input.actor, expiresInMs })
        }),
      revokeDecisionLinksFor: (input) =>
        Effect.gen(function*() {
          const tenant = yield* tenantBySlug(input.tenantSlug)
          return yield* links.revokeDecisionLinks({ tenantId: tenant.id, taskId: input.taskId, actor: input.actor })
        }),
      ...inboxRecords(tx),
      ...eventRecords(tx),
      ...(yield* makeDocumentRecords(tx)),
      ...dataRecords(tx),
      ...subledgerRecords(tx),
      ...glRecords(tx, publicUrl, glSessionTtlMs),
      ...agents,
      deliverPending: tx.outbox.deliverPending,
      relay: tx.outbox.relay,
      webhooks: yield* makeWebhookSubscriptions(options.webhooks?.publicUrl ?? Option.none()),
      webhookDeliverer: (yield* makeWebhookDeliverer(options.webhooks, links)).run
    }
    return service
  })

/** The embedded workspace over the SqlClient in context (run migrations first). */
export const makeEmbeddedWorkspace = makeEmbeddedWorkspaceWith()
