/**
 * Decision links on the workspace API (README "Decision links"): made and revoked by operators
 * and integrations over the admin listener (`svc links create / revoke`), served with the agent
 * registry (RegistryGroup) by the embedded workspace; a server without them answers 501.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { closed } from "../api/dtos.js"
import { ConflictWire, NotFoundWire } from "../api/errors.js"
import { TaskIdInput, Timestamp } from "../api/ids.js"
import { optional } from "../api/optional.js"
import { NotImplementedWire } from "./errors.js"
import { NonEmpty, WorkspaceErrors } from "./paths.js"

export const CreateDecisionLinksDto = Schema.Struct({
  tenantSlug: NonEmpty(128).annotate({ description: "The task's tenant, by slug" }),
  taskId: TaskIdInput.annotate({ description: "The task whose current APPROVAL step the links decide" }),
  actor: NonEmpty(256).annotate({ description: "The person the links decide as (their e-mail, as the edge names them)" }),
  expiresIn: optional(
    NonEmpty(64).annotate({ description: "ISO 8601 duration (PT72H, P3D); default PT72H, at most P30D" })
  )
}).pipe(closed("CreateDecisionLinksDto"))
export type CreateDecisionLinksDto = typeof CreateDecisionLinksDto.Type

export const DecisionLinks = Schema.Struct({
  tenantId: Schema.String,
  taskId: Schema.String,
  stepId: Schema.String,
  stepTitle: Schema.String,
  actor: Schema.String,
  expiresAt: Timestamp,
  approveUrl: Schema.String.annotate({ description: "Opens a page that approves, once, as `actor`, on its own confirmation" }),
  rejectUrl: Schema.String.annotate({ description: "Opens a page that rejects, once, as `actor`, on its own confirmation" })
}).annotate({ identifier: "DecisionLinks" })
export type DecisionLinks = typeof DecisionLinks.Type

export const RevokeDecisionLinksDto = Schema.Struct({
  tenantSlug: NonEmpty(128),
  taskId: optional(TaskIdInput.annotate({ description: "Only this task's links" })),
  actor: optional(NonEmpty(256).annotate({ description: "Only this person's links (any case or compatibility form)" }))
}).pipe(
  Schema.check(Schema.makeFilter((dto) =>
    dto.taskId !== undefined || dto.actor !== undefined ||
    { path: ["taskId"], issue: "one of taskId / actor is required (both: that person's links of that task)" }
  )),
  closed("RevokeDecisionLinksDto")
)
export type RevokeDecisionLinksDto = typeof RevokeDecisionLinksDto.Type

export const RevokedDecisionLinks = Schema.Struct({
  revoked: Schema.Number.annotate({ description: "Link pairs ended now (used, expired-by-revocation and revoked ones are not counted)" }),
  deciding: Schema.optionalKey(Schema.Number.annotate({
    description: "Pairs a decision was being made with at that moment: ended too, but that decision may still stand"
  }))
}).annotate({ identifier: "RevokedDecisionLinks" })
export type RevokedDecisionLinks = typeof RevokedDecisionLinks.Type

export const createDecisionLinksEndpoint = HttpApiEndpoint.post("createDecisionLinks", "/links", {
  payload: CreateDecisionLinksDto,
  success: DecisionLinks.pipe(HttpApiSchema.status(201)),
  error: [...WorkspaceErrors, ConflictWire, NotFoundWire, NotImplementedWire]
})
  .annotate(OpenApi.Summary, "Make an approve and a reject link for a person")
  .annotate(
    OpenApi.Description,
    "For the task's current APPROVAL step: two links under SVC_PUBLIC_URL that decide it, once (either of the " +
      "pair), as `actor`, until `expiresAt`. Opening one changes nothing: its page's own POST decides, under " +
      "the same rules as POST /v1/tasks/:taskId/action. 400 when SVC_PUBLIC_URL is unset, for a bad duration or " +
      "actor, or when the current step is not an APPROVAL step; 404 for an unknown task; 409 when the task has no " +
      "step waiting."
  )

export const revokeDecisionLinksEndpoint = HttpApiEndpoint.post("revokeDecisionLinks", "/links/revoke", {
  payload: RevokeDecisionLinksDto,
  success: RevokedDecisionLinks,
  error: [...WorkspaceErrors, NotFoundWire, NotImplementedWire]
})
  .annotate(OpenApi.Summary, "End a task's or a person's links early")
  .annotate(
    OpenApi.Description,
    "Every open link pair of the task, of the person, or of that person on that task, ends now: opening one " +
      "says it was revoked, and it decides nothing."
  )
