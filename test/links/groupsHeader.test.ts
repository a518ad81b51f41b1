/**
 * A decision link's route may be left open by the edge (the link names its person): then the
 * groups header is the client's own, and must not vouch for the link's person. A step assigned to
 * a group only: a link for someone outside it, posted with a forged groups header and no person
 * named, is refused (403); the same groups with the person the edge names are taken. Before, the
 * forged header decided the step.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type LinkGateway, startLinkGateway } from "./linkGateway.js"
import { acmeTask, linksWorld } from "./world.js"

let links: LinkGateway

beforeAll(async () => {
  // The links world, its first step assigned to the finance group alone.
  const world = linksWorld()
  Object.assign(world.workflows[0]!.runbook.steps[0]!, { assignees: ["group:finance"] })
  links = await startLinkGateway(world, { SVC_ACTOR_HEADER: "x-forwarded-email", SVC_GROUPS_HEADER: "x-forwarded-groups" })
}, 60_000)
afterAll(async () => {
  await links?.gw.cleanup()
})

const approveUrl = (taskId: string, actor: string) => links.approveUrl(taskId, actor)
const post = (url: string, headers: Record<string, string>) => http("POST", url, {}, { "sec-fetch-site": "same-origin", ...headers })
const stepOf = (taskId: string) => links.stepOf(taskId)

describe("a decision link and the groups header", () => {
  it("a forged groups header with no person named does not vouch for the link's person (403, nothing decided)", async () => {
    const taskId = acmeTask(0)
    const url = await approveUrl(taskId, "bob@acme.example")
    const forged = await post(url, { "x-forwarded-groups": "finance" })
    expect(forged.status, forged.text).toBe(403)
    expect(await stepOf(taskId)).toBe("controller_approval")
  })

  it("the groups the edge sends with the person it names are taken", async () => {
    const taskId = acmeTask(1)
    const url = await approveUrl(taskId, "bob@acme.example")
    const named = await post(url, { "x-forwarded-email": "bob@acme.example", "x-forwarded-groups": "finance" })
    expect(named.status, named.text).toBe(200)
    expect(await stepOf(taskId)).toBe("cfo_approval")
  })
})
