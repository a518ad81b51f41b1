/**
 * What the workspace server needs beyond the WorkspaceClient port to serve the agent registry
 * and the GL adapter's webhook. The embedded store implements it; a server given none answers
 * 501 on those routes.
 */
import type { BadRequest, Conflict, NotFound } from "../api/errors.js"
import type { WsEffect } from "./WorkspaceClient.js"
import type { Agent, AgentVersion, CreateAgentDto, CreateAgentVersionDto, CreatedAgent } from "./registry.js"
import type { CreateDecisionLinksDto, DecisionLinks, RevokeDecisionLinksDto, RevokedDecisionLinks } from "./links.js"
import type { CreatedWebhook, CreateWebhookDto, RotatedWebhookSecret, Webhook, WebhookAttempt, WebhookDelivery } from "./webhooks.js"

export type { Agent, AgentVersion, CreateAgentDto, CreateAgentVersionDto, CreatedAgent }

export interface WorkspaceExtras {
  /** The GL adapter's success webhook: session `consumerId` completed with `service`; the connection becomes ACTIVE. */
  readonly completeGlSession: (consumerId: string, service: string) => WsEffect<void, NotFound | BadRequest>
  /** BadRequest for an unknown tenant or a bad kind / externalRef. */
  readonly createAgent: (input: CreateAgentDto) => WsEffect<CreatedAgent, NotFound | BadRequest | Conflict>
  readonly listAgents: (tenantId?: string) => WsEffect<ReadonlyArray<Agent>, BadRequest>
  readonly getAgent: (id: string) => WsEffect<Agent, NotFound>
  readonly deleteAgent: (id: string) => WsEffect<void, NotFound>
  /** An identical re-post returns the recorded version; the same label with a different config is a Conflict. */
  readonly createAgentVersion: (
    agentId: string,
    input: CreateAgentVersionDto
  ) => WsEffect<AgentVersion, NotFound | Conflict | BadRequest>
  /** `svc links create`: BadRequest without an explicit SVC_PUBLIC_URL, for a bad duration or actor, or a step that is no approval. */
  readonly createDecisionLinksFor: (input: CreateDecisionLinksDto) => WsEffect<DecisionLinks, NotFound | BadRequest | Conflict>
  readonly revokeDecisionLinksFor: (input: RevokeDecisionLinksDto) => WsEffect<RevokedDecisionLinks, NotFound | BadRequest>
  /** Outbound webhook subscriptions (./webhooks.ts); `tenant` is a slug, another tenant's subscription is NotFound. */
  readonly webhooks?: WebhookSubscriptions | undefined
}

export interface WebhookSubscriptions {
  readonly create: (input: CreateWebhookDto) => WsEffect<CreatedWebhook, BadRequest>
  readonly list: (tenant: string) => WsEffect<ReadonlyArray<Webhook>, BadRequest>
  readonly get: (tenant: string, id: string) => WsEffect<Webhook, NotFound | BadRequest>
  readonly remove: (tenant: string, id: string) => WsEffect<void, NotFound | BadRequest>
  readonly rotateSecret: (tenant: string, id: string) => WsEffect<RotatedWebhookSecret, NotFound | BadRequest>
  readonly setEnabled: (tenant: string, id: string, enabled: boolean) => WsEffect<Webhook, NotFound | BadRequest>
  readonly deliveries: (tenant: string, id: string, limit: number) => WsEffect<ReadonlyArray<WebhookAttempt>, NotFound | BadRequest>
  readonly resend: (tenant: string, deliveryId: string) => WsEffect<WebhookDelivery, NotFound | BadRequest>
}
