import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { Tenant } from "../services/Tenant.js"
import { WorkspaceClient } from "../upstream/WorkspaceClient.js"

export const SubledgersLive = HttpApiBuilder.group(GatewayApi, "subledgers", (handlers) =>
  Effect.gen(function*() {
    const workspace = yield* WorkspaceClient
    const tenants = yield* Tenant

    return handlers
      .handle("rejectRow", ({ path }) =>
        Effect.flatMap(tenants.current, (tenant) => workspace.rejectRow(tenant.id, path.ledger, path.rowId)))
      .handle("updateCell", ({ path, payload }) =>
        Effect.flatMap(tenants.current, (tenant) =>
          workspace.updateRow(tenant.id, path.ledger, path.rowId, payload.field, payload.value)))
  }))
