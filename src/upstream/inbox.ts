import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { closed } from "../api/dtos.js"
import { ConflictWire, ForbiddenWire, NotFoundWire } from "../api/errors.js"
import { InboxItem, StepClaim } from "../api/inbox.js"
import { IdempotencyKeyHeaders } from "../api/idempotency.js"
import { optional } from "../api/optional.js"
import { NonEmpty, TenantPath, TenantTaskPath, WorkspaceErrors } from "./paths.js"

/**
 * One page of the inbox as the store selects it (README "Inbox and assignment"): the tenant's
 * running tasks at a step, ordered by (waitingSince, taskId), after `after`, at most `limit`.
 * `assignee`: "me" (the caller's actor and groups, as the request names them) or an actor or
 * group:<name>. `overdue`: only steps whose dueAt is before `now`.
 */
/** An RFC 3339 date-time, as the document's `format: date-time` says. */
const DATE_TIME = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/
const DateTime = Schema.String.check(
  Schema.makeFilter((s: string) => (DATE_TIME.test(s) && !Number.isNaN(Date.parse(s))) || "must be an ISO 8601 date-time", {
    toJsonSchema: () => ({})
  })
).annotate({ description: "ISO 8601 timestamp", format: "date-time" })

export const InboxQuery = Schema.Struct({
  awaiting: optional(NonEmpty(128)),
  assignee: optional(NonEmpty(262)),
  entityId: optional(NonEmpty(64)),
  workflowId: optional(NonEmpty(256)),
  overdue: optional(Schema.Boolean),
  now: DateTime,
  limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })),
  after: optional(Schema.Struct({ waitingSince: NonEmpty(64), taskId: NonEmpty(64) }))
}).pipe(closed("WorkspaceInboxQuery"))
export type InboxQuery = typeof InboxQuery.Type

export const InboxSlice = Schema.Struct({
  items: Schema.Array(InboxItem),
  /** More items may follow the last one. */
  more: Schema.Boolean,
  /** Where the page ended (the next page starts after it): the last task read, shown or not. */
  last: optional(Schema.Struct({ waitingSince: Schema.String, taskId: Schema.String }))
}).annotate({ identifier: "WorkspaceInboxSlice" })
export type InboxSlice = typeof InboxSlice.Type

export const ClaimRequest = Schema.Struct({ override: Schema.Boolean }).pipe(closed("WorkspaceClaimRequest"))

export class InboxGroup extends HttpApiGroup.make("inbox")
  .add(
    HttpApiEndpoint.post("inbox", "/tenants/:tenantId/inbox", {
      params: TenantPath,
      payload: InboxQuery,
      success: InboxSlice,
      error: WorkspaceErrors
    })
      .annotate(OpenApi.Summary, "A page of the inbox")
      .annotate(
        OpenApi.Description,
        "A read (POST only to carry the query): the tenant's IN_PROGRESS tasks at a step, oldest waiting first " +
          "(waitingSince, then task id), after `after`, at most `limit`, with who each step waits for and whether " +
          "the caller (x-svc-actor, x-svc-identity) may act."
      )
  )
  .add(
    HttpApiEndpoint.post("claimStep", "/tenants/:tenantId/tasks/:taskId/claim", {
      params: TenantTaskPath,
      headers: IdempotencyKeyHeaders,
      payload: ClaimRequest,
      success: StepClaim,
      error: [...WorkspaceErrors, ConflictWire, ForbiddenWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Claim a task's current step for the caller")
      .annotate(
        OpenApi.Description,
        "Takes the current step for the actor in x-svc-actor (403 when nobody is named, or not assigned while " +
          "x-svc-identity says assignment holds; `override` lets a person take an agent's step). Another holder: 409 " +
          "naming them; the holder again: the same claim. Recorded in the task's timeline (step.claimed)."
      )
  )
  .add(
    HttpApiEndpoint.delete("releaseClaim", "/tenants/:tenantId/tasks/:taskId/claim", {
      params: TenantTaskPath,
      headers: IdempotencyKeyHeaders,
      success: HttpApiSchema.NoContent,
      // 409: an Idempotency-Key reused for a different request.
      error: [...WorkspaceErrors, ConflictWire, ForbiddenWire, NotFoundWire]
    })
      .annotate(OpenApi.Summary, "Release the claim of a task's current step")
      .annotate(
        OpenApi.Description,
        "Releases the current step's claim (its holder only, while assignment holds); a no-op when there is none. " +
          "Recorded in the task's timeline (step.released)."
      )
  )
  .annotate(OpenApi.Title, "Inbox and claims")
  .annotate(OpenApi.Description, "What waits for whom across a tenant's entities; claims of steps")
{}
