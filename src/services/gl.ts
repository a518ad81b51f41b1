/**
 * The GL connection of the tenant this process serves: its status, a connect session, a
 * disconnect. Shared by every front end (the HTTP handlers, src/handlers/gl.ts; agent tools).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ServiceUnavailable } from "../api/errors.js"
import type { GlStatus } from "../api/resources.js"
import { attributionNow } from "./Actor.js"
import { Tenant } from "./Tenant.js"
import type { Workspace } from "../upstream/WorkspaceClient.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** The later of metadata.updated_at and connectedAt, or null when neither is known. */
const lastSyncAt = (c: Workspace.GlConnection): string | null => {
  const times = [c.metadata.updated_at, c.connectedAt].filter((t): t is string => typeof t === "string")
  if (times.length === 0) return null
  return times.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a))
}

export const glStatusOf = (tenantId: string, connection: Option.Option<Workspace.GlConnection>): GlStatus =>
  Option.match(connection, {
    onNone: () => ({ connected: false, tenantId }),
    onSome: (c) => ({
      connected: c.status === "ACTIVE",
      tenantId,
      provider: c.provider,
      service: c.service,
      status: c.status,
      lastSyncAt: lastSyncAt(c),
      workspaceName: c.metadata.name ?? c.metadata.service ?? c.service
    })
  })

/**
 * GL connect and disconnect belong to no task, so they have no timeline: each is an `audit`
 * line in the process log (README "The audit timeline"), with who and which request.
 */
const auditGl = (type: "gl.connect_started" | "gl.disconnected", fields: Record<string, unknown>) =>
  Effect.flatMap(attributionNow, (who) =>
    Effect.logInfo("audit").pipe(
      // The log line carries the request id already.
      Effect.annotateLogs({ audit: type, ...fields, actor: who.actor ?? null })
    ))

/** The tenant's GL connection as the API shows it. */
export const glStatus = Effect.gen(function*() {
  const workspace = yield* WorkspaceClient
  const tenant = yield* (yield* Tenant).current
  return glStatusOf(tenant.id, yield* workspace.getGlConnection(tenant.id))
})

/** A connect session for the tenant (`serviceId` preselects a GL service), audited. */
export const connectGl = (serviceId: string | undefined) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    return yield* workspace.createGlSession(tenant.id, serviceId).pipe(
      Effect.tap((session) =>
        auditGl("gl.connect_started", { tenantId: tenant.id, serviceId: serviceId ?? null, consumerId: session.consumerId })
      ),
      // The tenant was resolved a moment ago: the workspace forgetting it is upstream trouble.
      Effect.catchTag("NotFound", () =>
        new ServiceUnavailable({ message: "The workspace service does not know this tenant; retry shortly" }))
    )
  })

/** Removes the tenant's GL connection, audited. */
export const disconnectGl = Effect.gen(function*() {
  const workspace = yield* WorkspaceClient
  const tenant = yield* (yield* Tenant).current
  yield* Effect.tap(workspace.deleteGlConnection(tenant.id), () => auditGl("gl.disconnected", { tenantId: tenant.id }))
})
