/**
 * The start the raw-socket fault tests share: the built gateway on a temporary database
 * (startBuiltGateway: the demo fixture, bound to acme) with one expense-review task started, so
 * that the bodies they cut, refuse or abandon go to a real task's paths. `env` on top (a JSON
 * log to count lines in, a body limit, a short idle collection).
 */
import { expect } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

export interface GatewayWithTask {
  /** Its `cleanup` stops the process (by its pid) and removes the database's directory. */
  readonly gateway: BuiltGateway
  /** The gateway's port, for raw sockets. */
  readonly port: number
  /** The task's id, percent-encoded for a path. */
  readonly taskId: string
}

export const startGatewayWithTask = async (env: Record<string, string>): Promise<GatewayWithTask> => {
  const gateway = await startBuiltGateway(env)
  try {
    const entities = await http("GET", `${gateway.url}/v1/entities`)
    const created = await http("POST", `${gateway.url}/v1/entities/${entities.body[0].id}/tasks`, {
      workflowId: "expense-review",
      context: { period: "2026-11" }
    })
    expect(created.status).toBe(201)
    return { gateway, port: Number(new URL(gateway.url).port), taskId: encodeURIComponent(created.body.id) }
  } catch (e) {
    await gateway.cleanup()
    throw e
  }
}
