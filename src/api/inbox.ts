/**
 * The inbox and claims (README "Inbox and assignment"): every waiting step of the tenant's running
 * tasks across entities, oldest waiting first, with who it waits for and whether the caller may
 * act; and the claim of a task's current step.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { isMaxChars } from "./textLength.js"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { closed } from "./dtos.js"
import { CommonErrors, ConflictWire, NotFoundWire } from "./errors.js"
import { TaskIdInput, Timestamp, Uuid, UuidInput } from "./ids.js"
import { optional } from "./optional.js"
import { TaskSummary } from "./resources.js"
import { AwaitingParam } from "./taskListing.js"

/** The most items one inbox page may ask for, and the default. */
export const INBOX_PAGE_MAX = 200
export const INBOX_PAGE_DEFAULT = 50

export const StepClaim = Schema.Struct({
  stepId: Schema.String,
  by: Schema.String.annotate({ description: "Who holds it (the actor the edge named)" }),
  at: Timestamp,
  override: Schema.Boolean.annotate({ description: "A person took over an agent's step" })
}).annotate({ identifier: "StepClaim" })
export type StepClaim = typeof StepClaim.Type

export const InboxItem = Schema.Struct({
  task: TaskSummary,
  entity: Schema.Struct({ id: Uuid, name: Schema.String }),
  step: Schema.Struct({ id: Schema.String, title: Schema.String, component: Schema.String }),
  waitingSince: Timestamp.annotate({ description: "When the step became current" }),
  dueAt: optional(Timestamp.annotate({ description: "waitingSince plus the step's dueIn, when it has one" })),
  overdue: Schema.Boolean,
  assignees: Schema.Array(Schema.String).annotate({
    description: "Who the step waits for: actors, groups (group:<name>) and its agent (agent:<uuid>); empty: anyone"
  }),
  agentId: optional(Uuid.annotate({ description: "The agent the step is assigned to" })),
  requireClaim: Schema.Boolean,
  claim: optional(StepClaim),
  mayAct: Schema.Boolean.annotate({
    description: "Whether the caller may decide, act on rows or submit a file now (assignment, claims; " +
      "four-eyes is checked when they do)"
  })
}).annotate({ identifier: "InboxItem" })
export type InboxItem = typeof InboxItem.Type

export const InboxPage = Schema.Struct({
  items: Schema.Array(InboxItem),
  nextCursor: optional(Schema.String.annotate({ description: "Send back as `cursor` (same filters) for the next page" }))
}).annotate({ identifier: "InboxPage" })
export type InboxPage = typeof InboxPage.Type

const CURSOR_RE = /^[A-Za-z0-9_-]{1,512}$/u
export const INBOX_CURSOR_MESSAGE = "cursor: must be the nextCursor of an earlier inbox answer with the same filters"

const LIMIT_MESSAGE = `must be an integer from 1 to ${INBOX_PAGE_MAX}`

export const InboxParams = Schema.Struct({
  awaiting: Schema.optionalKey(AwaitingParam),
  assignee: Schema.optionalKey(
    Schema.String.check(Schema.isMinLength(1), isMaxChars(262)).annotate({
      description: "`me` (the caller's actor and groups), or an actor or group:<name> as the steps name them"
    })
  ),
  entityId: Schema.optionalKey(UuidInput),
  workflowId: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), isMaxChars(256))),
  overdue: Schema.optionalKey(Schema.Literals(["true", "false"]).annotate({ description: "true: only steps past their dueAt" })),
  limit: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(/^\d{1,4}$/u, { message: LIMIT_MESSAGE })).pipe(
      Schema.decodeTo(
        Schema.Finite.check(Schema.isInt(), Schema.isBetween({ minimum: 1, maximum: INBOX_PAGE_MAX }, { message: LIMIT_MESSAGE })),
        SchemaTransformation.numberFromString
      )
    ).pipe(Schema.annotateEncoded({ description: `Items per page (1..${INBOX_PAGE_MAX}, default ${INBOX_PAGE_DEFAULT})` }))
  ),
  cursor: Schema.optionalKey(
    Schema.String.check(Schema.isPattern(CURSOR_RE, { message: INBOX_CURSOR_MESSAGE.slice("cursor: ".length) }))
  )
})
export type InboxQueryParams = typeof InboxParams.Type

export const ClaimDto = Schema.Struct({
  override: Schema.optionalKey(Schema.Boolean.annotate({
    description: "A person taking over a step assigned to an agent (recorded in the timeline)"
  }))
}).pipe(closed("ClaimDto"))

const TaskPath = Schema.Struct({ taskId: TaskIdInput })

/** Who the gateway takes the caller to be: what "Mine" and "My groups" of the inbox mean for them. */
export const Me = Schema.Struct({
  actor: Schema.NullOr(Schema.String).annotate({ description: "The actor the edge names for this request; null when none" }),
  groups: Schema.Array(Schema.String).annotate({
    description: "The caller's groups as the edge gives them (SVC_GROUPS_HEADER or SVC_JWT_GROUPS_CLAIM); a step " +
      "assigned to group:<name> waits for them when <name> is one of these"
  }),
  identity: Schema.Literals(["edge", "none"]).annotate({
    description: "edge: an identity is configured at the edge, so assignment holds; none: nobody is named and " +
      "assignment is shown, not enforced"
  }),
  tenant: Schema.Struct({ id: Uuid, slug: Schema.String, name: Schema.String }).annotate({
    description: "The tenant this gateway is bound to (SVC_TENANT_SLUG): every answer of this gateway is about it"
  })
}).annotate({ identifier: "Me" })
export type Me = typeof Me.Type

export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(
    HttpApiEndpoint.get("getMe", "/me", { success: Me, error: CommonErrors })
      .annotate(OpenApi.Summary, "Who the gateway takes the caller to be")
      .annotate(
        OpenApi.Description,
        "The actor and groups the edge names for this request (groups only with an actor) and whether an identity " +
          "is configured: what the inbox's `assignee=me` matches; and the tenant this gateway is bound to (id, slug, name)."
      )
  )
  .add(
    HttpApiEndpoint.get("getInbox", "/inbox", { query: InboxParams, success: InboxPage, error: CommonErrors })
      .annotate(OpenApi.Summary, "What waits, and for whom")
      .annotate(
        OpenApi.Description,
        "Every waiting step of the tenant's IN_PROGRESS tasks across entities, oldest waiting first, with its " +
          "entity, step, waitingSince, dueAt, assignees, claim and whether the caller may act. Filters: `awaiting` " +
          "(component), `assignee` (`me`, or an actor or group:<name>; `me` from a request that names nobody is a 400), " +
          "`entityId`, `workflowId`, `overdue=true`. " +
          `Pages of \`limit\` (default ${INBOX_PAGE_DEFAULT}); \`nextCursor\` continues with the same filters and covers ` +
          "every waiting step once: a step that becomes current after the cursor's position appears later."
      )
  )
  .add(
    HttpApiEndpoint.post("claim", "/tasks/:taskId/claim", {
      params: TaskPath,
      payload: ClaimDto,
      success: StepClaim,
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Claim the current step")
      .annotate(
        OpenApi.Description,
        "Takes the task's current step for the caller (who must be named, and assigned when an identity is " +
          "configured; `override: true` lets a person take over an agent's step). Another holder: 409 naming them. " +
          "The holder again: the same claim. A decision or the step moving on releases it. A claim blocks no one " +
          "else's decision unless the step says requireClaim."
      )
  )
  .add(
    HttpApiEndpoint.delete("releaseClaim", "/tasks/:taskId/claim", {
      params: TaskPath,
      success: HttpApiSchema.NoContent,
      // 409: an Idempotency-Key reused for a different request, as on every write.
      error: [...CommonErrors, NotFoundWire, ConflictWire]
    })
      .annotate(OpenApi.Summary, "Release the claim")
      .annotate(OpenApi.Description, "Releases the current step's claim (its holder only, with an identity configured); a no-op when none.")
  )
  .annotate(OpenApi.Title, "Inbox")
  .annotate(OpenApi.Description, "What waits for whom, across entities; claims")
{}
