/**
 * A decision link on a step that says `requireClaim: true`: its person acts from a message and
 * cannot claim from there, so the link's decision claims an unclaimed step for them and decides,
 * in one transaction (the timeline: step.claimed, then step.completed, both by them). A step
 * another person holds answers 409 naming the holder, and the link stays usable. A decision the
 * step's rules refuse (four-eyes) leaves no claim behind. Before: 403 "must be claimed" always.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import type { BuiltGateway } from "../timeline/support.js"
import { type LinkGateway, startLinkGateway } from "./linkGateway.js"
import { acmeTask, CFO_TASK, linksWorld } from "./world.js"

const HEADER = "x-forwarded-email"
let links: LinkGateway
let gw: BuiltGateway

beforeAll(async () => {
  // Both approval steps name ann and bob and require a claim; the CFO step is also four-eyes.
  const world = linksWorld()
  const [controller, cfo] = world.workflows[0]!.runbook.steps
  Object.assign(controller!, { assignees: ["ann@acme.example", "bob@acme.example"], requireClaim: true })
  Object.assign(cfo!, { assignees: ["ann@acme.example", "bob@acme.example"], requireClaim: true })
  links = await startLinkGateway(world, { SVC_ACTOR_HEADER: HEADER })
  gw = links.gw
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const approveUrl = (taskId: string, actor: string) => links.approveUrl(taskId, actor)
/** The page's own POST, the link route left open by the edge (no person named). */
const confirm = (url: string) => http("POST", url, {}, { "sec-fetch-site": "same-origin" })
const stepOf = (taskId: string) => links.stepOf(taskId)
const claimEvents = async (taskId: string) =>
  ((await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ type: string; payload: any }>)
    .filter((e) => e.type === "step.claimed" || e.type === "step.released" || e.type === "step.completed")
    .map((e) => `${e.type} ${e.payload.stepId} ${e.payload.holder ?? e.payload.actor} by ${e.payload.actor}`)

describe("a decision link on a step that requires a claim", () => {
  it("unclaimed: the link's decision claims it for the link's person and decides", async () => {
    const taskId = acmeTask(0)
    const decided = await confirm(await approveUrl(taskId, "ann@acme.example"))
    // Before: 403, the step must be claimed first (which the person cannot do from a message).
    expect(decided.status, decided.text).toBe(200)
    expect(decided.body).toMatchObject({ ok: true, decision: "approved", actor: "ann@acme.example" })
    expect(await stepOf(taskId)).toBe("cfo_approval")
    expect(await claimEvents(taskId)).toEqual([
      "step.claimed controller_approval ann@acme.example by ann@acme.example",
      "step.completed controller_approval ann@acme.example by ann@acme.example"
    ])
  })

  it("claimed by someone else: 409 naming the holder, nothing decided, and the link still works", async () => {
    const taskId = acmeTask(1)
    const url = await approveUrl(taskId, "ann@acme.example")
    const claim = await http("POST", `${gw.url}/v1/tasks/${taskId}/claim`, {}, { [HEADER]: "bob@acme.example" })
    expect(claim.status, claim.text).toBe(200)
    const held = await confirm(url)
    expect(held.status, held.text).toBe(409)
    expect(held.body).toMatchObject({ statusCode: 409, error: "Conflict" })
    expect(held.body.message).toContain("bob@acme.example")
    expect(await stepOf(taskId)).toBe("controller_approval")
    // Bob lets go: the same link decides.
    expect((await http("DELETE", `${gw.url}/v1/tasks/${taskId}/claim`, undefined, { [HEADER]: "bob@acme.example" })).status).toBeLessThan(300)
    const decided = await confirm(url)
    expect(decided.status, decided.text).toBe(200)
    expect(await stepOf(taskId)).toBe("cfo_approval")
  })

  it("held by the link's person already: decides", async () => {
    const taskId = acmeTask(2)
    const url = await approveUrl(taskId, "ann@acme.example")
    expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/claim`, {}, { [HEADER]: "Ann@acme.example" })).status).toBe(200)
    const decided = await confirm(url)
    expect(decided.status, decided.text).toBe(200)
    expect(await stepOf(taskId)).toBe("cfo_approval")
  })

  it("two people's links confirmed at once: one decides, the other is a 409 naming the decision, never 'must be claimed'", async () => {
    // Whichever commits second finds the first's claim (409 naming its holder) or, once the first
    // decision is delivered, the step approved by them. Before: 403 "must be claimed before it is
    // acted on (POST /v1/tasks/:taskId/claim)", what a link's person cannot do from a message.
    for (let i = 10; i < 14; i++) {
      const taskId = acmeTask(i)
      const [annUrl, bobUrl] = await Promise.all([approveUrl(taskId, "ann@acme.example"), approveUrl(taskId, "bob@acme.example")])
      const answers = await Promise.all([confirm(annUrl), confirm(bobUrl)])
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join("\n")).toEqual([200, 409])
      const decided = answers.find((a) => a.status === 200)!
      const refused = answers.find((a) => a.status === 409)!
      const decider = decided.body.actor as string
      expect(refused.body).toMatchObject({ statusCode: 409, error: "Conflict" })
      expect(refused.body.message).toContain(decider)
      expect(await stepOf(taskId)).toBe("cfo_approval")
      expect(await claimEvents(taskId)).toEqual([
        `step.claimed controller_approval ${decider} by ${decider}`,
        `step.completed controller_approval ${decider} by ${decider}`
      ])
    }
  })

  it("a decision the step's rules refuse (four-eyes) leaves no claim behind", async () => {
    // CFO_TASK: controller_approval was approved by Ann; the CFO step needs someone else.
    const refused = await confirm(await approveUrl(CFO_TASK, "ann@acme.example"))
    expect(refused.status, refused.text).toBe(403)
    expect(await claimEvents(CFO_TASK)).toEqual([])
    // Nobody holds it: bob may claim it.
    expect((await http("POST", `${gw.url}/v1/tasks/${CFO_TASK}/claim`, {}, { [HEADER]: "bob@acme.example" })).status).toBe(200)
  })
})
