/**
 * Revoking a link pair while its decision is being made (README "Decision links"): the decision
 * cannot be stopped once under way, so the revocation must not say it ended that pair. Before,
 * `links revoke` answered `{"revoked": 1}` and the link's POST answered 200 with the task moved
 * on (20 of 30 tries on the built process): the operator was told a link was dead that decided.
 * Now such a pair is counted as `deciding`, and its page says it was used, not withdrawn.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { acmeTask, ACME_TASKS, linksWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test/acme"
const ADMIN_TOKEN = randomBytes(24).toString("base64url")

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_PUBLIC_URL: PUBLIC, SVC_ADMIN_TOKEN: ADMIN_TOKEN }, linksWorld())
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const admin = (path: string, body: unknown) =>
  http("POST", `${gw.adminUrl}/workspace${path}`, body, { authorization: `Bearer ${ADMIN_TOKEN}` })

it("a revocation racing a link's decision never says it ended a pair that then decided", async () => {
  let racedWhileDeciding = 0
  for (let i = 0; i < ACME_TASKS; i++) {
    const taskId = acmeTask(i)
    const made = await admin("/links", { tenantSlug: "acme", taskId, actor: "ann@acme.example" })
    expect(made.status, made.text).toBe(201)
    const url = gw.url + String(made.body.approveUrl).slice(PUBLIC.length)
    const [decided, revoked] = await Promise.all([
      http("POST", url, {}, { "sec-fetch-site": "same-origin", origin: gw.url }),
      new Promise((r) => setTimeout(r, i % 5)).then(() => admin("/links/revoke", { tenantSlug: "acme", taskId }))
    ])
    expect(revoked.status, revoked.text).toBe(200)
    const ui = (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body as { step: { id: string } | null }
    const moved = ui.step?.id !== "controller_approval"
    // Every answer is true: 200 exactly when the task moved on, 410 otherwise.
    expect(decided.status === 200, `${decided.status} ${decided.text}`).toBe(moved)
    if (moved) {
      // The pair decided: the revocation did not end it (before: {"revoked": 1}).
      expect(revoked.body.revoked, `try ${i}: ${revoked.text}`).toBe(0)
      if (revoked.body.deciding === 1) racedWhileDeciding++
      const page = await http("GET", url, undefined, { accept: "application/json" })
      expect(page.status).toBe(410)
      expect(page.body.message).toContain("already used")
    } else {
      expect(decided.status, decided.text).toBe(410)
      expect(revoked.body).toMatchObject({ revoked: 1 })
    }
  }
  // The race was actually run: some revocations met a decision under way.
  expect(racedWhileDeciding).toBeGreaterThan(0)
}, 120_000)
