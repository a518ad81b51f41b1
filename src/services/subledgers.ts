/**
 * Direct changes to the tenant's subledger rows (a reject, a cell edit), by the ledgers' rules
 * the workspace applies. Shared by every front end (the HTTP handlers, src/handlers/subledgers.ts).
 */
import * as Effect from "effect/Effect"
import type { Scalar } from "../api/resources.js"
import { Tenant } from "./Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

/** Rejects row `rowId` of `ledger`. */
export const rejectRow = (ledger: string, rowId: string) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    return yield* workspace.rejectRow(tenant.id, ledger, rowId)
  })

/** Sets `field` of row `rowId` of `ledger` to `value`. */
export const updateCell = (ledger: string, rowId: string, field: string, value: Scalar) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    return yield* workspace.updateRow(tenant.id, ledger, rowId, field, value)
  })
