/**
 * A decision link's page in a real browser (Debian's Chromium, playwright-core) against the
 * built gateway: opening and rendering it decides nothing (what a chat preview or a scanning
 * browser does), it reads well at 390 and 1280 px (no sideways scroll, axe clean, 44 px targets
 * on a phone), and only its confirm button decides, once, as the link's person.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Browser, launch, seriousViolations } from "../console/browser.js"
import { allStarted, http, type RunningService, startBuilt } from "../support/process.js"
import { acmeTask, writeWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test"
const ADMIN_TOKEN = randomBytes(24).toString("base64url")

let dir = ""
let gw: RunningService | undefined
let browser: Browser | undefined

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "links-page-"))
  await allStarted([
    startBuilt({
      SVC_TENANT_SLUG: "acme",
      SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
      SVC_SEED_FILE: writeWorld(dir),
      SVC_PUBLIC_URL: PUBLIC,
      SVC_ADMIN_TOKEN: ADMIN_TOKEN
    }).then((s) => (gw = s)),
    launch().then((b) => (browser = b))
  ])
}, 90_000)
afterAll(async () => {
  await Promise.allSettled([browser?.close(), gw?.stop()])
  rmSync(dir, { recursive: true, force: true })
})

const linksFor = async (taskId: string, actor: string) => {
  const res = await http("POST", `${gw!.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId, actor }, {
    authorization: `Bearer ${ADMIN_TOKEN}`
  })
  expect(res.status, res.text).toBe(201)
  const local = (u: string) => gw!.url + u.slice(PUBLIC.length)
  return { approve: local(res.body.approveUrl as string), reject: local(res.body.rejectUrl as string) }
}

const stepOf = async (taskId: string) => ((await http("GET", `${gw!.url}/v1/tasks/${taskId}/ui`)).body.step?.id ?? null) as string | null

describe("the link page in Chromium", { timeout: 60_000 }, () => {
  for (const width of [390, 1280]) {
    it(`at ${width} px: rendering it decides nothing; it reads well; Approve decides once, as the link's person`, async () => {
      const taskId = acmeTask(width === 390 ? 0 : 1)
      const links = await linksFor(taskId, "ann@acme.example")
      const page = await browser!.context.newPage()
      try {
        await page.setViewportSize({ width, height: 900 })
        const errors: Array<string> = []
        page.on("console", (m) => m.type() === "error" && errors.push(m.text()))
        page.on("pageerror", (e) => errors.push(e.message))
        await page.goto(links.approve)
        await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Approve “Controller approval”?")
        // Rendered, scripts run: still nothing decided (a previewing browser does exactly this).
        expect(await stepOf(taskId)).toBe("controller_approval")
        const text = await page.locator("main").innerText()
        for (const s of ["Payment run", "Acme US Inc.", "ann@acme.example", "12,480.00 USD", "Delta Air Lines"]) expect(text).toContain(s)
        expect(await page.evaluate("document.documentElement.scrollWidth - innerWidth")).toBeLessThanOrEqual(0)
        expect(await seriousViolations(page)).toEqual([])
        const button = page.getByRole("button", { name: "Approve" })
        const box = await button.boundingBox()
        expect(box!.height).toBeGreaterThanOrEqual(width === 390 ? 44 : 24)
        await page.getByLabel("Comments (optional)").fill("Looks right")
        await button.click()
        await expect.poll(() => page.getByRole("status").textContent()).toBe("Approved. You can close this page.")
        expect(await button.isVisible()).toBe(false)
        expect(await stepOf(taskId)).toBe("cfo_approval")
        expect(errors).toEqual([]) // the CSP let the page's own style and script run, and nothing else was tried
        const events = (await http("GET", `${gw!.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ type: string; payload: any }>
        expect(events.find((e) => e.type === "step.completed")!.payload).toMatchObject({ actor: "ann@acme.example", via: "link", reason: "Looks right" })

        // The pair's other link now says why it does not work, and decides nothing.
        await page.goto(links.reject)
        await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("This decision was already made")
        expect(await page.getByRole("alert").textContent()).toMatch(/already used: the step was approved/)
        expect(await page.getByRole("button").count()).toBe(0)
        expect(await seriousViolations(page)).toEqual([])
        expect(await stepOf(taskId)).toBe("cfo_approval")
      } finally {
        await page.close()
      }
    })
  }

  it("a refused decision (the step moved on while the page was open) is told on the page, and nothing changes", async () => {
    const taskId = acmeTask(2)
    const links = await linksFor(taskId, "ann@acme.example")
    const page = await browser!.context.newPage()
    try {
      await page.goto(links.reject)
      await expect.poll(() => page.getByRole("button", { name: "Reject step" }).isVisible()).toBe(true)
      // Decided elsewhere while the page was open.
      expect((await http("POST", `${gw!.url}/v1/tasks/${taskId}/action`, { type: "approved" })).status).toBe(200)
      await page.getByRole("button", { name: "Reject step" }).click()
      await expect.poll(() => page.getByRole("status").textContent()).toMatch(/no longer at step “Controller approval”/)
      expect(await stepOf(taskId)).toBe("cfo_approval")
    } finally {
      await page.close()
    }
  })
})
