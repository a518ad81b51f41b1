/**
 * Look-alike names on the built process: the same person written another way (case, Unicode
 * composition, full-width letters) is still the same decider for four-eyes, an actor header
 * that reads as an agent in another case is refused, and a posted event cannot take a source
 * that reads as the gateway's own (`Audit`, ` audit`, a zero-width character in `audit`).
 *
 * Before the fix: `Ana@acme.test` approved the CFO step after `ana@acme.test` approved the
 * controller's (the task COMPLETED with one person's two approvals), `Agent:<uuid>` was taken
 * as an actor, and events with source `Audit` or `\u200baudit` were stored.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

const DECISIONS = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

let dir: string
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "decisions-lookalikes-"))
  gw = await startBuilt({
    SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`,
    SVC_SEED_FILE: DECISIONS,
    SVC_TENANT_SLUG: "acme",
    SVC_ACTOR_HEADER: "x-forwarded-email"
  })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

/** A header value as a proxy sends a UTF-8 name: its bytes, one character each. */
const as = (actor: string) => ({ "x-forwarded-email": Buffer.from(actor, "utf8").toString("latin1") })

const newFourEyesRun = async () => {
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run-four-eyes", context: {} }, as("creator@acme.test"))
  expect(created.status).toBe(201)
  return created.body.id as string
}

describe("four-eyes compares people, not spellings (built process)", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["another case", "ana@acme.test", "Ana@ACME.test"],
    ["composed vs decomposed", "an\u00e4@acme.test", "ana\u0308@acme.test"],
    ["full-width letters", "ana@acme.test", "\uff41na@acme.test"],
    // Capital I (Latin, Greek) for l: before, case folding made it an i and the second approval passed.
    ["capital I for l", "bill@acme.test", "biII@acme.test"],
    ["Greek capital iota for l", "bill@acme.test", "bi\u0399\u0399@acme.test"],
    // A Greek capital kappa: case folding had made it κ, which the table reads as ĸ.
    ["Greek capital kappa for K", "KIM@acme.test", "\u039aIM@acme.test"]
  ]
  for (const [what, first, second] of cases) {
    it(`${what}: the controller's second approval is refused`, async () => {
      const taskId = await newFourEyesRun()
      const approve = (actor: string) => http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" }, as(actor))
      expect((await approve(first)).status).toBe(200)
      const again = await approve(second)
      expect(again.status, JSON.stringify(again.body)).toBe(403)
      expect(again.body).toMatchObject({ statusCode: 403, error: "Forbidden" })
      expect(again.body.message).toMatch(/four-eyes/)
      const ui = await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`, undefined, as("reader@acme.test"))
      expect(ui.body.step.id).toBe("cfo_approval")
      // Someone else still can.
      expect((await approve("bob@acme.test")).status).toBe(200)
    }, 30_000)
  }
})

describe("names that read as the gateway's own (built process)", () => {
  it("an actor header reading as an agent in another case is refused", async () => {
    for (const actor of ["Agent:11111111-1111-4111-8111-111111111111", "AGENT:x"]) {
      const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} }, as(actor))
      expect(created.status, actor).toBe(400)
      expect(created.body.message).toMatch(/agent:/)
    }
  })

  it("a posted event cannot take a source reading as audit, workspace or an agent", async () => {
    const taskId = await newFourEyesRun()
    const sources = [
      "Audit", "AUDIT", " audit", "audit ", "\u200baudit", "au\u00addit", "Workspace", "agent\u200b:x", "\uff41udit",
      // Small capitals, and l, 1 and i alike, 0 as o (before: stored as a producer's).
      "\u1d00\u1d1c\u1d05\u026a\u1d1b", "audlt", "aud1t", "w0rkspace", "\u1d21\u1d0fʀ\u1d0bsp\u1d00\u1d04\u1d07",
      // Hangul fillers and the Braille blank draw nothing; colon look-alikes after agent.
      "au\u3164dit", "au\u115fdit", "au\u2800dit", "agent\u2236x", "agent\u02d0x", "agent\ua789x",
      // Read through the whole confusables table by the store: Lisu and Cherokee capitals, vv as w.
      "\ua4eeudit", "\ua4eaorkspace", "\u13aaUDIT", "\u13d4ORKSPACE", "vvorkspace",
      // With a combining mark (the skeleton keeps marks), letters with an overlay, two more colons.
      "\ua4ee\u0301udit", "\u13d4ORKSPACE\u0323", "au\u0111it", "w\u00f8rkspace", "agent\u1361x", "agent\ufe30x", "\ua4ee\ua4d6\ua4f0\ua4e0\ua4d4:x", "\ua4ea\ua4f3\ua4e3\ua4d7\ua4e2\ua4d1\ua4ee\ua4da\ua4f0"
    ]
    for (const [i, source] of sources.entries()) {
      const posted = await http("POST", `${gw.url}/v1/tasks/${taskId}/events`, {
        type: "row.edited",
        source,
        seq: 100 + i,
        payload: { actor: "bob@acme.test" }
      }, as("mallory@acme.test"))
      expect(posted.status, JSON.stringify(source)).toBe(400)
      expect(posted.body.message, JSON.stringify(source)).toMatch(/written by the gateway only/)
      expect(posted.body.message, JSON.stringify(source)).toMatch(/source/)
    }
    // Ordinary sources are still taken, in any script.
    for (const [i, source] of ["auditor-bot", "worker", "vvorker", "agents", "agent-runner", "Agentur", "workspaces", "Reagent:x", "\u0430\u0433\u0435\u043d\u0442", "\u5be9\u8a08", "\u13a0\u13cd\u13a6\u13b8"].entries()) {
      const ok = await http("POST", `${gw.url}/v1/tasks/${taskId}/events`, { type: "note", source, seq: 50 + i, payload: {} }, as("mallory@acme.test"))
      expect(ok.status, `${source}: ${JSON.stringify(ok.body)}`).toBe(200)
    }
  })
})
