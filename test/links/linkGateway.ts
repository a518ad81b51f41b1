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
  readonly adminToken: string
  /** A link approving the task's current step for `actor`, on this process's own address. */
  readonly approveUrl: (taskId: string, actor: string) => Promise<string>
  /** Both links of a pair for `actor`, on this process's own address. */
  readonly pairOf: (taskId: string, actor: string) => Promise<{ readonly approveUrl: string; readonly rejectUrl: string }>
  /** A POST to the admin listener's workspace API (`/workspace<path>`), with the admin token. */
  readonly admin: (path: string, body: unknown) => ReturnType<typeof http>
  /** The task's current step, null when none. */
  readonly stepOf: (taskId: string) => Promise<string | null>
}

export const startLinkGateway = async (world: ReturnType<typeof linksWorld>, env: Record<string, string> = {}): Promise<LinkGateway> => {
  const adminToken = randomBytes(24).toString("base64url")
  const gw = await startBuiltGateway({ ...env, SVC_PUBLIC_URL: PUBLIC, SVC_ADMIN_TOKEN: adminToken }, world)
  const admin = (path: string, body: unknown) => http("POST", `${gw.adminUrl}/workspace${path}`, body, { authorization: `Bearer ${adminToken}` })
  const pairOf = async (taskId: string, actor: string) => {
    const res = await admin("/links", { tenantSlug: "acme", taskId, actor })
    expect(res.status, res.text).toBe(201)
    const local = (url: string) => gw.url + url.slice(PUBLIC.length)
    return { approveUrl: local(res.body.approveUrl as string), rejectUrl: local(res.body.rejectUrl as string) }
  }
  return {
    gw,
    adminToken,
    approveUrl: async (taskId, actor) => (await pairOf(taskId, actor)).approveUrl,
    pairOf,
    admin,
    stepOf: async (taskId) => ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id ?? null) as string | null
  }
}
