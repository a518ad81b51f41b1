/**
 * Direct changes to the tenant's subledger rows (a reject, a cell edit), by the ledgers' rules
 * the workspace applies. Shared by every front end (the HTTP handlers, src/handlers/subledgers.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
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

/** Sets `field` of row `rowId` of `ledger` to `value` (if it still holds `expected`, when given). */
export const updateCell = (ledger: string, rowId: string, field: string, value: Scalar, expected: Option.Option<Scalar> = Option.none()) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenant = yield* (yield* Tenant).current
    return yield* workspace.updateRow(tenant.id, ledger, rowId, field, value, expected)
  })
