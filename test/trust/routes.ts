/**
 * Every route of an HttpApi, read from its definition (HttpApi.reflect), never hand-listed:
 * a route added to GatewayApi or WorkspaceApi is attacked by the trust-boundary tests without
 * anyone remembering to add it.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { randomUUID } from "node:crypto"

export interface Route {
  /** `group.endpoint`, e.g. `tasks.getUi`. */
  readonly key: string
  readonly method: string
  /** The path template with its prefix, e.g. `/v1/tasks/:taskId/ui`. */
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly hasPayload: boolean
}

export const paramsOf = (path: string): ReadonlyArray<string> => [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!)

export const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<Route> => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      routes.push({
        key: `${group.identifier}.${endpoint.identifier}`,
        method: endpoint.method,
        path: endpoint.path,
        params: paramsOf(endpoint.path),
        hasPayload: endpoint.payload.size > 0
      })
    }
  })
  return routes
}

/** Every method a client can send; routes must answer each the same way for another tenant's ids. */
export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"] as const

/** The ids of one tenant, or their stand-ins (fresh random ids naming nothing). */
export interface Side {
  readonly tenantId: string
  readonly slug: string
  readonly entities: ReadonlyArray<string>
  /** Root task ids and at least one composite child id `<root>:<step>:<slug>`. */
  readonly tasks: ReadonlyArray<string>
  readonly documents: ReadonlyArray<string>
  readonly rows: ReadonlyArray<{ readonly ledger: string; readonly id: string }>
  readonly workflows: ReadonlyArray<string>
  readonly agents: ReadonlyArray<string>
  readonly consumers: ReadonlyArray<string>
  /** Webhook subscription ids (filled into `:id` with the agents: both are `/…/:id` routes). */
  readonly webhooks: ReadonlyArray<string>
  /** Webhook delivery ids (`msg_…`, a message's webhook-id) for `:deliveryId`. */
  readonly deliveries: ReadonlyArray<string>
}

/** A side with the same shape and every id replaced by a fresh one that names nothing. */
export const standInFor = (side: Side): Side => ({
  tenantId: randomUUID(),
  slug: `no-such-tenant-${randomUUID().slice(0, 8)}`,
  entities: side.entities.map(() => randomUUID()),
  tasks: side.tasks.map((t) => {
    const [, ...rest] = t.split(":")
    return [randomUUID(), ...rest].join(":")
  }),
  documents: side.documents.map(() => randomUUID()),
  rows: side.rows.map((r) => ({ ledger: r.ledger, id: randomUUID() })),
  workflows: side.workflows.map((_, i) => `no-such-workflow-${i}`),
  agents: side.agents.map(() => randomUUID()),
  consumers: side.consumers.map(() => randomUUID()),
  webhooks: side.webhooks.map(() => randomUUID()),
  deliveries: side.deliveries.map(() => `msg_${randomUUID().replace(/-/g, "")}`)
})

/** One way to fill a template's parameters; index i of each list pairs a side with its stand-in. */
export type Fill = Readonly<Record<string, string>>

const candidates = (side: Side, param: string): ReadonlyArray<string> => {
  switch (param) {
    case "tenantId":
      return [side.tenantId]
    case "slug":
      return [side.slug]
    case "entityId":
      return side.entities
    case "taskId":
      return side.tasks
    case "documentRef":
    case "documentId":
      return side.documents
    case "workflowId":
      return side.workflows
    case "id":
      // Agents (/registry/agents/:id) and webhook subscriptions (/webhooks/:id): each route gets both.
      return [...side.agents, ...side.webhooks]
    case "consumerId":
      return side.consumers
    case "deliveryId":
      return side.deliveries
    default:
      throw new Error(`No ids for the path parameter :${param}: teach test/trust/routes.ts where to take them from`)
  }
}

/**
 * Every fill of `params` from `side`, paired index by index with the same fill from `standIn`
 * (`ledger` and `rowId` come together from one row).
 */
export const fillsOf = (
  params: ReadonlyArray<string>,
  side: Side,
  standIn: Side
): ReadonlyArray<readonly [Fill, Fill]> => {
  let fills: Array<readonly [Record<string, string>, Record<string, string>]> = [[{}, {}]]
  const rest = params.filter((p) => p !== "ledger" && p !== "rowId")
  if (params.includes("rowId")) {
    fills = fills.flatMap(([a, b]) =>
      side.rows.map((row, i) =>
        [{ ...a, ledger: row.ledger, rowId: row.id }, { ...b, ledger: standIn.rows[i]!.ledger, rowId: standIn.rows[i]!.id }] as const
      )
    )
  } else if (params.includes("ledger")) {
    throw new Error("A :ledger without a :rowId: teach test/trust/routes.ts how to fill it")
  }
  for (const param of rest) {
    const real = candidates(side, param)
    const fake = candidates(standIn, param)
    fills = fills.flatMap(([a, b]) => real.map((value, i) => [{ ...a, [param]: value }, { ...b, [param]: fake[i]! }] as const))
  }
  return fills
}

export const fillPath = (template: string, fill: Fill): string =>
  template.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(fill[name]!))

/** The text with every filled value replaced by its parameter's name: how a 404 for one id compares with another's. */
export const normalize = (text: string, fill: Fill): string =>
  Object.entries(fill)
    .sort(([, a], [, b]) => b.length - a.length)
    .reduce((t, [name, value]) => t.split(value).join(`<${name}>`).split(encodeURIComponent(value)).join(`<${name}>`), text)
