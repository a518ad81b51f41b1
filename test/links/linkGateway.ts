/**
 * The built gateway on the links world (./world.ts) with decision links on: a public URL the
 * links are made for, an admin token to make them with, and the helpers every link test needs.
 */
import { randomBytes } from "node:crypto"
import { expect } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import type { linksWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test"

export interface LinkGateway {
  readonly gw: BuiltGateway
  /** A link approving the task's current step for `actor`, on this process's own address. */
  readonly approveUrl: (taskId: string, actor: string) => Promise<string>
  /** The task's current step, null when none. */
  readonly stepOf: (taskId: string) => Promise<string | null>
}

export const startLinkGateway = async (world: ReturnType<typeof linksWorld>, env: Record<string, string> = {}): Promise<LinkGateway> => {
  const adminToken = randomBytes(24).toString("base64url")
  const gw = await startBuiltGateway({ ...env, SVC_PUBLIC_URL: PUBLIC, SVC_ADMIN_TOKEN: adminToken }, world)
  return {
    gw,
    approveUrl: async (taskId, actor) => {
      const res = await http("POST", `${gw.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId, actor }, { authorization: `Bearer ${adminToken}` })
      expect(res.status, res.text).toBe(201)
      return gw.url + (res.body.approveUrl as string).slice(PUBLIC.length)
    },
    stepOf: async (taskId) => ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id ?? null) as string | null
  }
}
