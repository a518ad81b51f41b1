/**
 * Path parameter schemas shared by the workspace API groups. Ids in paths are plain strings on
 * purpose: an id of the wrong shape names no record, so it answers 404 like any missing or
 * other-tenant record, identically on every implementation of the port.
 */
import * as Schema from "effect/Schema"

export const NonEmpty = (max: number) => Schema.String.pipe(Schema.minLength(1), Schema.maxLength(max))

export const IdParam = (description: string) => NonEmpty(512).annotations({ description })

export const TenantIdParam = IdParam("Tenant UUID")
export const TaskIdParam = IdParam("Task UUID, or a child workflow's composite `<parent_task_id>:<step>:<slug>`")

export const TenantPath = Schema.Struct({ tenantId: TenantIdParam })
export const EntityPath = Schema.Struct({ tenantId: TenantIdParam, entityId: IdParam("Entity UUID") })
export const TenantTaskPath = Schema.Struct({ tenantId: TenantIdParam, taskId: TaskIdParam })

export const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
  description: "Free-form JSON object"
})
