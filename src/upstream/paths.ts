/**
 * Path parameter schemas shared by the workspace API groups. Ids in paths are plain strings on
 * purpose: an id of the wrong shape names no record, so it answers 404 like any missing or
 * other-tenant record, identically on every implementation of the port.
 */
import * as Schema from "effect/Schema"
import { isMaxChars } from "../api/textLength.js"
import {
  BadGatewayWire,
  BadRequestWire,
  GatewayTimeoutWire,
  InternalServerErrorWire,
  PayloadTooLargeWire,
  ServiceUnavailableWire
} from "../api/errors.js"
import { TASK_ID_MAX_LENGTH, withUuidFolded } from "../api/ids.js"
import { textProblem } from "../api/jsonValue.js"
import { jsonObject } from "../api/jsonObject.js"

export const NonEmpty = (max: number) => Schema.String.check(Schema.isMinLength(1), isMaxChars(max))

/** Text the store keeps: exactly as sent, so no NUL and no unpaired surrogate (query values are not body-checked). */
export const StoredText = (max: number) =>
  // Nothing to publish for the check itself, but `{}` keeps what is annotated after it (a
  // description) in the document: Effect 4 puts those annotations on this last check.
  NonEmpty(max).check(Schema.makeFilter((s) => textProblem(s) ?? true, { toJsonSchema: () => ({}) }))

/** An id in a path: any text (another shape names nothing: 404), its UUID read in any case. */
export const IdParam = (description: string, max = 512) => withUuidFolded(NonEmpty(max).annotate({ description }))

export const TenantIdParam = IdParam("Tenant UUID")
export const TaskIdParam = IdParam(
  "Task UUID, or a child workflow's composite `<parent_task_id>:<step>:<slug>`",
  TASK_ID_MAX_LENGTH
)

export const TenantPath = Schema.Struct({ tenantId: TenantIdParam })
export const EntityPath = Schema.Struct({ tenantId: TenantIdParam, entityId: IdParam("Entity UUID") })
export const TenantTaskPath = Schema.Struct({ tenantId: TenantIdParam, taskId: TaskIdParam })

export const JsonObject = jsonObject({ description: "Free-form JSON object" })

/**
 * The errors every workspace endpoint declares (Effect 4 has no API-wide errors): any request
 * can be malformed or too large; the service may fail or depend on something that does.
 */
export const WorkspaceErrors = [
  BadRequestWire,
  PayloadTooLargeWire,
  InternalServerErrorWire,
  BadGatewayWire,
  ServiceUnavailableWire,
  GatewayTimeoutWire
] as const
