/** The embedded store's tenants, their entities and the workflows they may start (./store.ts). */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import type { Workspace } from "../../upstream/model.js"
import { type Transactions, notFound } from "./transaction.js"

export const tenantRecords = (tx: Transactions): Pick<WorkspaceClientService, "resolveTenant" | "listEntities" | "getEntity" | "listWorkflows" | "getRunbook"> => {
  const { sql, guard, workflowOf, runbookOf } = tx
  return {
    resolveTenant: (slug) =>
      sql<Workspace.Tenant>`SELECT id, slug, name FROM tenants WHERE slug = ${slug}`.pipe(
        Effect.flatMap(([t]) => t === undefined ? notFound(`Tenant ${slug}`) : Effect.succeed({ ...t })),
        guard("resolveTenant")
      ),

    listEntities: (tenantId) =>
      sql<{ id: string; tenant_id: string; slug: string; name: string }>`
        SELECT id, tenant_id, slug, name FROM entities WHERE tenant_id = ${tenantId} ORDER BY rowid`.pipe(
        Effect.map((rows) => rows.map((e) => ({ id: e.id, tenantId: e.tenant_id, slug: e.slug, name: e.name }))),
        guard("listEntities")
      ),

    getEntity: (tenantId, entityId) =>
      sql<{ id: string; tenant_id: string; slug: string; name: string }>`
        SELECT id, tenant_id, slug, name FROM entities WHERE id = ${entityId} AND tenant_id = ${tenantId}`.pipe(
        Effect.flatMap(([e]) =>
          e === undefined
            ? notFound(`Entity ${entityId}`)
            : Effect.succeed({ id: e.id, tenantId: e.tenant_id, slug: e.slug, name: e.name })
        ),
        guard("getEntity")
      ),

    listWorkflows: (tenantId) =>
      sql<{ id: string; name: string; tenant_id: string | null }>`
        SELECT id, name, tenant_id FROM workflows WHERE tenant_id IS NULL OR tenant_id = ${tenantId} ORDER BY rowid`.pipe(
        Effect.map((rows) => rows.map((w) => ({ id: w.id, name: w.name, tenantId: w.tenant_id }))),
        guard("listWorkflows")
      ),

    getRunbook: (tenantId, workflowId) =>
      Effect.gen(function*() {
        const wf = yield* workflowOf(workflowId)
        if (Option.isNone(wf) || (wf.value.tenant_id !== null && wf.value.tenant_id !== tenantId)) {
          return yield* notFound(`Workflow ${workflowId}`)
        }
        return yield* runbookOf(workflowId)
      }).pipe(guard("getRunbook"))
  }
}
