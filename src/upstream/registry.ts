/**
 * The agent registry of spec §4 ("related registry operations") and the GL adapter's success
 * webhook: served by the embedded workspace only, through `WorkspaceExtras`.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { optional } from "../api/optional.js"
import { closed } from "../api/dtos.js"
import { BadRequestWire, ConflictWire, NotFoundWire } from "../api/errors.js"
import { Timestamp, Uuid, UuidInput, withUuidFolded } from "../api/ids.js"
import { NotImplementedWire } from "./errors.js"

import { IdParam, JsonObject, NonEmpty, TenantPath, WorkspaceErrors } from "./paths.js"
import { jsonObject } from "../api/jsonObject.js"
import { createDecisionLinksEndpoint, revokeDecisionLinksEndpoint } from "./links.js"

export const CreateAgentDto = Schema.Struct({
  kind: NonEmpty(32).annotate({ description: "Agent runtime kind, a lowercase URI scheme (e.g. claude, openai)" }),
  externalRef: NonEmpty(1024).annotate({ description: "The agent's native id, or `<kind>://<native-id>`" }),
  name: NonEmpty(256),
  tenantSlug: optional(NonEmpty(128).annotate({ description: "Owning tenant by slug" })),
  tenantId: optional(withUuidFolded(Uuid.annotateKey({ description: "Owning tenant by id" })))
}).pipe(
  Schema.check(Schema.makeFilter((dto) =>
    dto.tenantSlug !== undefined || dto.tenantId !== undefined ||
    { path: ["tenantId"], issue: "one of tenantSlug / tenantId is required (both must name the same tenant)" }
  )),
  closed("CreateAgentDto")
)
export type CreateAgentDto = typeof CreateAgentDto.Type

export const AgentVersion = Schema.Struct({
  agentId: Uuid,
  version: Schema.String,
  config: JsonObject,
  createdAt: Timestamp
}).annotate({ identifier: "AgentVersion" })
export type AgentVersion = typeof AgentVersion.Type

export const Agent = Schema.Struct({
  id: Uuid.annotateKey({ description: "Registry UUID; runbook steps reference the agent by it" }),
  kind: Schema.String,
  externalRef: Schema.String.annotate({ description: "The resolved `<kind>://<native-id>`" }),
  tenantId: Uuid,
  name: Schema.String,
  createdAt: Timestamp,
  versions: Schema.Array(AgentVersion)
}).annotate({ identifier: "Agent", description: "A registered agent; never carries its API key" })
export type Agent = typeof Agent.Type

export const CreatedAgent = Schema.Struct({
  ...Agent.fields,
  apiKey: Schema.String.annotate({
    description: "The agent's API key in plaintext, returned only here, once; only its hash is stored"
  })
}).annotate({ identifier: "CreatedAgent" })
export type CreatedAgent = typeof CreatedAgent.Type

export const CreateAgentVersionDto = Schema.Struct({
  version: NonEmpty(64).annotate({ description: "Version label, unique per agent" }),
  config: optional(jsonObject({ description: "Free-form configuration of this version" }))
}).pipe(closed("CreateAgentVersionDto"))
export type CreateAgentVersionDto = typeof CreateAgentVersionDto.Type

export const GlWebhookSuccessDto = Schema.Struct({
  consumerId: NonEmpty(256).annotate({ description: "The consumerId of the connect session being completed" }),
  service: NonEmpty(128).annotate({ description: "The provider service the person picked" })
}).pipe(closed("GlWebhookSuccessDto"))
export type GlWebhookSuccessDto = typeof GlWebhookSuccessDto.Type

const AgentPath = Schema.Struct({ id: IdParam("Agent registry UUID") })

/** An API key's SHA-256 as the workspace API takes it (src/domain/apiKeys.ts hashes keys so). */
export const KEY_HASH_PATTERN = /^[0-9a-f]{64}$/u

export const AgentKeyLookupDto = Schema.Struct({
  keyHash: Schema.String.check(Schema.isPattern(KEY_HASH_PATTERN, { message: "keyHash must be 64 lowercase hex digits (a SHA-256)" })).annotate({ description: "SHA-256 of the agent's API key, 64 lowercase hex digits; the key itself is never sent" })
}).pipe(closed("AgentKeyLookupDto"))
export type AgentKeyLookupDto = typeof AgentKeyLookupDto.Type

export class RegistryGroup extends HttpApiGroup.make("registry")
  .add(
    HttpApiEndpoint.post("createAgent", "/registry/agents", {
      payload: CreateAgentDto,
      success: CreatedAgent.pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, ConflictWire, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "Register an agent")
      .annotate(
        OpenApi.Description,
        "Records the reference (kind, externalRef, tenant) and provisions a per-agent API key. Only the key's " +
          "hash is stored; the plaintext comes back once, here, with the agent UUID and the resolved externalRef. " +
          "400 for an unknown tenant, a bad kind or externalRef; 409 naming the existing agent when the tenant " +
          "already has one with this kind and externalRef (delete it to register it again)."
      )
  )
  .add(
    HttpApiEndpoint.get("listAgents", "/registry/agents", {
      query: Schema.Struct({ tenantId: optional(UuidInput) }),
      success: Schema.Array(Agent),
      error: [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "List registered agents")
      .annotate(OpenApi.Description, "Every registered agent, or those of one tenant; API keys are never shown.")
  )
  .add(
    HttpApiEndpoint.get("getAgent", "/registry/agents/:id", {
      params: AgentPath,
      success: Agent,
      error: [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "Get a registered agent")
      .annotate(OpenApi.Description, "One agent by its registry UUID; the API key is never shown.")
  )
  .add(
    HttpApiEndpoint.delete("deleteAgent", "/registry/agents/:id", {
      params: AgentPath,
      success: HttpApiSchema.NoContent,
      error: [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "Delete a registered agent")
      .annotate(OpenApi.Description, "Removes the agent, its versions and its API key. 404 when unknown.")
  )
  .add(
    HttpApiEndpoint.post("createAgentVersion", "/registry/agents/:id/versions", {
      params: AgentPath,
      payload: CreateAgentVersionDto,
      success: AgentVersion.pipe(HttpApiSchema.status(201)),
      error: [...WorkspaceErrors, ConflictWire, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "Record an agent version")
      .annotate(
        OpenApi.Description,
        "Records a version of the agent. Re-posting an identical version returns the recorded one; the same label " +
          "with a different config is a 409."
      )
  )
  .add(
    HttpApiEndpoint.post("findAgentByKeyHash", "/tenants/:tenantId/agents/by-key-hash", {
      params: TenantPath,
      payload: AgentKeyLookupDto,
      success: Agent,
      error: [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "Find the tenant's agent holding an API key")
      .annotate(
        OpenApi.Description,
        "The agent tool server's authentication: the agent of the tenant whose API key has this SHA-256, " +
          "the stored and given hashes compared in constant time. 404 for any other key (unknown, deleted, or " +
          "another tenant's agent's). Sent in the body, so no hash lands in an access log."
      )
  )
  .add(
    HttpApiEndpoint.post("glWebhookSuccess", "/gl/webhook/success", {
      payload: GlWebhookSuccessDto,
      success: HttpApiSchema.NoContent,
      error: [...WorkspaceErrors, NotFoundWire, BadRequestWire, NotImplementedWire]
    })
      .annotate(OpenApi.Summary, "GL adapter: connect succeeded")
      .annotate(
        OpenApi.Description,
        "Called by the GL adapter when a person completes the connect flow of session `consumerId`: the " +
          "tenant's GL connection becomes ACTIVE with `service`. 404 for an unknown or used session."
      )
  )
  .add(createDecisionLinksEndpoint)
  .add(revokeDecisionLinksEndpoint)
  .annotate(OpenApi.Title, "Registry and webhooks")
  .annotate(
    OpenApi.Description,
    "Agent registry, decision links and the GL adapter's success webhook. Served by the embedded workspace; a " +
      "server without them answers 501."
  )
{}
