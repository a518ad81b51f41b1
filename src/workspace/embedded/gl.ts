/** The embedded store's GL connections and connect sessions (a session completes once, within its lifetime). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import { BadRequest, NotFound } from "../../api/errors.js"
import type { WorkspaceClientService, WsEffect } from "../../upstream/WorkspaceClient.js"
import type { Workspace } from "../../upstream/model.js"
import { type GlRow, glOfRow, nowIso, upsertGlConnection } from "./db.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { glSessionCutoff, unknownGlService } from "../../domain/glServices.js"
import { type Transactions, notFound } from "./transaction.js"
import { enqueueWebhooks, TENANT_CHAIN } from "./webhookOutbox.js"

/** An open GL connect session: whose it is and which service it preselects. */
export interface GlSession {
  readonly consumerId: string
  readonly tenantId: string
  readonly tenantSlug: string
  readonly serviceId: string | null
}

/** What the GL connect page and the adapter's webhook need beyond the port. */
export interface GlSessions {
  /** The GL adapter's success webhook: the session's tenant gets an ACTIVE connection. */
  readonly completeGlSession: (consumerId: string, service: string) => WsEffect<Workspace.GlConnection, NotFound | BadRequest>
  /**
   * The connect session `consumerId` while it is open (not yet completed), with its tenant; None
   * for an unknown or completed one. The GL connect page checks the tenant before answering.
   */
  readonly openGlSession: (consumerId: string) => WsEffect<Option.Option<GlSession>>
}

export const glRecords = (tx: Transactions, publicUrl: string, glSessionTtlMs: number): Pick<WorkspaceClientService & GlSessions, "getGlConnection" | "createGlSession" | "deleteGlConnection" | "openGlSession" | "completeGlSession"> => {
  const { sql, guard, write, idempotent } = tx
  const upsertGl = (c: Workspace.GlConnection) => upsertGlConnection(sql, c)

  return {
    getGlConnection: (tenantId) =>
      sql<GlRow>`SELECT * FROM gl_connections WHERE tenant_id = ${tenantId}`.pipe(
        Effect.map(([row]) => Option.map(Option.fromNullishOr(row), glOfRow)),
        guard("getGlConnection")
      ),

    createGlSession: (tenantId, serviceId) =>
      write(idempotent(tenantId, writeFingerprint.createGlSession(serviceId), Effect.gen(function*() {
        const unknown = serviceId === undefined ? undefined : unknownGlService(serviceId)
        if (unknown !== undefined) return yield* new BadRequest({ message: unknown })
        const [tenant] = yield* sql<{ id: string }>`SELECT id FROM tenants WHERE id = ${tenantId}`
        if (tenant === undefined) return yield* notFound(`Tenant ${tenantId}`)
        const consumerId = randomUUID()
        yield* sql`INSERT INTO gl_sessions ${
          sql.insert({ consumer_id: consumerId, tenant_id: tenantId, service_id: serviceId ?? null, created_at: nowIso() })
        }`
        return { sessionUrl: `${publicUrl}/workspace/gl/connect/${consumerId}`, consumerId }
      }))).pipe(guard("createGlSession")),

    deleteGlConnection: (tenantId) =>
      write(
        idempotent(
          tenantId,
          writeFingerprint.deleteGlConnection(),
          Effect.flatMap(
            sql<{ provider: string; service: string }>`DELETE FROM gl_connections WHERE tenant_id = ${tenantId} RETURNING provider, service`,
            ([gone]) =>
              // The GL is the tenant's, not a task's: its webhook events form the tenant's own chain.
              gone === undefined ? Effect.void : enqueueWebhooks(sql, tenantId, TENANT_CHAIN, [
                { type: "gl.disconnected", payload: { provider: gone.provider, service: gone.service } }
              ], nowIso())
          )
        )
      ).pipe(guard("deleteGlConnection")),

    openGlSession: (consumerId) =>
      sql<{ tenant_id: string; slug: string; service_id: string | null }>`
        SELECT s.tenant_id, t.slug, s.service_id FROM gl_sessions s JOIN tenants t ON t.id = s.tenant_id
        WHERE s.consumer_id = ${consumerId} AND s.completed_at IS NULL AND s.created_at > ${glSessionCutoff(glSessionTtlMs)}`.pipe(
        Effect.map(([row]) =>
          Option.map(Option.fromNullishOr(row), (r): GlSession => ({
            consumerId,
            tenantId: r.tenant_id,
            tenantSlug: r.slug,
            serviceId: r.service_id
          }))
        ),
        guard("openGlSession")
      ),

    completeGlSession: (consumerId, svc) =>
      write(Effect.gen(function*() {
        if (svc.trim() === "") return yield* Effect.fail(new BadRequest({ message: "service: required" }))
        const [session] = yield* sql<{ tenant_id: string }>`
          SELECT tenant_id FROM gl_sessions
          WHERE consumer_id = ${consumerId} AND completed_at IS NULL AND created_at > ${glSessionCutoff(glSessionTtlMs)}`
        // A session completes once, and only within its lifetime; a replayed webhook finds nothing to complete.
        if (session === undefined) return yield* notFound(`Connect session ${consumerId}`)
        const now = nowIso()
        const connection: Workspace.GlConnection = {
          tenantId: session.tenant_id,
          provider: "local",
          service: svc,
          status: "ACTIVE",
          connectedAt: now,
          metadata: { name: `Local ${svc}`, service: svc, updated_at: now }
        }
        yield* upsertGl(connection)
        yield* enqueueWebhooks(sql, session.tenant_id, TENANT_CHAIN, [
          { type: "gl.connected", payload: { provider: connection.provider, service: svc, status: connection.status } }
        ], now)
        yield* sql`UPDATE gl_sessions SET completed_at = ${now} WHERE consumer_id = ${consumerId}`
        return connection
      })).pipe(guard("completeGlSession"))
  }
}
