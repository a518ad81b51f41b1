/**
 * What a link's POST and the admin listener's link-making take (README "Decision links", "Input
 * rules"): the rules of the gateway's other routes, not looser ones of their own.
 * - comments: the decision's limit, 10,000 Unicode characters (code points), as `POST /action`
 *   (before: 4,000 UTF-16 units, so 2,001 emoji were refused); a JSON `null` body is a 400 naming
 *   the body, as on `/claim` (before: read as `{}`, and decided);
 * - the link's actor: a person the edge could name, so no comma (before: "ann@…,bob@…" was made);
 * - revoke's `taskId`: a task id (before: "x" answered 200 {"revoked":0});
 * - a gateway bound to one tenant makes no link of another, whose pages it does not serve (before:
 *   201 with a URL of this gateway that then answered 404).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { svc } from "../cli/harness.js"
import { http } from "../support/process.js"
import type { BuiltGateway } from "../timeline/support.js"
import { type LinkGateway, startLinkGateway } from "./linkGateway.js"
import { acmeTask, GLOBEX_TASK, linksWorld } from "./world.js"

let links: LinkGateway
let gw: BuiltGateway

beforeAll(async () => {
  links = await startLinkGateway(linksWorld())
  gw = links.gw
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const confirm = (url: string, body: unknown) => http("POST", url, body, { "sec-fetch-site": "same-origin" })
const reasonOf = async (taskId: string) =>
  (await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body.controller_approval?.reason as string | undefined

describe("a link's POST", () => {
  it("takes comments up to 10,000 Unicode characters, an emoji counting one, as POST /action does", async () => {
    const emoji = "😀".repeat(5000) // 10,000 UTF-16 units, 5,000 characters
    const taskId = acmeTask(0)
    const pair = await links.pairOf(taskId, "ann@acme.example")
    const tooLong = await confirm(pair.approveUrl, { comments: "a".repeat(10_001) })
    expect(tooLong.status, tooLong.text).toBe(400)
    expect(tooLong.body.message).toMatch(/^comments: /)
    expect(tooLong.body.message).toContain("10000")
    const decided = await confirm(pair.approveUrl, { comments: emoji })
    expect(decided.status, decided.text).toBe(200)
    expect(await reasonOf(taskId)).toBe(emoji)

    const full = "é".repeat(10_000)
    const other = await links.pairOf(acmeTask(1), "ann@acme.example")
    expect((await confirm(other.rejectUrl, { comments: full })).status).toBe(200)
    expect(await reasonOf(acmeTask(1))).toBe(full)
  })

  it("answers a JSON null body with a 400 naming the body, deciding nothing", async () => {
    const taskId = acmeTask(2)
    const pair = await links.pairOf(taskId, "ann@acme.example")
    for (const body of [null, [], "yes", 1]) {
      const res = await confirm(pair.approveUrl, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.message).toMatch(/body/i)
    }
    expect(await links.stepOf(taskId)).toBe("controller_approval")
    expect((await confirm(pair.approveUrl, {})).status).toBe(200)
  })
})

describe("making and revoking links", () => {
  it("refuses an actor the edge could never name: a comma, invisible characters", async () => {
    for (const actor of ["ann@acme.test,bob@acme.test", "ann@acme.test, bob@acme.test", "ann\u200b@acme.test", "ann\u2060@acme.test"]) {
      const res = await links.admin("/links", { tenantSlug: "acme", taskId: acmeTask(3), actor })
      expect(res.status, actor).toBe(400)
      expect(res.body.message, actor).toMatch(/^actor: /)
    }
  })

  it("refuses a revocation's taskId that is no task id, naming it", async () => {
    for (const taskId of ["x", "not-a-task", `${acmeTask(3)}:`]) {
      const res = await links.admin("/links/revoke", { tenantSlug: "acme", taskId })
      expect(res.status, taskId).toBe(400)
      expect(res.body.message, taskId).toMatch(/^taskId: /)
    }
    const cli = await svc(["links", "revoke", "x", "--tenant", "acme", "--admin-url", gw.adminUrl], { env: { SVC_ADMIN_TOKEN: links.adminToken } })
    expect(cli.code, cli.stdout).not.toBe(0)
    expect(cli.stderr).toMatch(/taskId/)
    // Upper case is the same task.
    const ok = await links.admin("/links/revoke", { tenantSlug: "acme", taskId: acmeTask(3).toUpperCase() })
    expect(ok.status, ok.text).toBe(200)
  })

  it("on a gateway bound to one tenant, refuses links of another tenant, whose pages it does not serve", async () => {
    const res = await links.admin("/links", { tenantSlug: "globex", taskId: GLOBEX_TASK, actor: "gus@globex.example" })
    expect(res.status, res.text).toBe(400)
    expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
    expect(res.body.message).toMatch(/^tenantSlug: /)
    expect(res.body.message).toContain("its own gateway")
  })
})
