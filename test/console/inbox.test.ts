/**
 * The console's inbox (where it opens) against the built gateway with an identity at the edge, in
 * Chromium: a waiting step is listed with its entity, step, due date (overdue marked) and who it
 * waits for; Claim shows the holder, and a claim someone else took first says who holds it; the
 * page at 390 and 1280 px scrolls no sideways and axe finds no serious or critical violation.
 */
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type ConsoleUnderTest, seriousViolations, startConsole } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_UK = "3acc7ce9-d0bf-431a-9528-aa340456a628"
const LATE_TASK = "11111111-1111-4111-8111-111111111111"

let run: ConsoleUnderTest | undefined
let gw: RunningService
let page: Page
let errors: Array<string>

beforeAll(async () => {
  run = await startConsole(
    { SVC_SEED_FILE: FIXTURE, SVC_ACTOR_HEADER: "x-forwarded-email", SVC_GROUPS_HEADER: "x-forwarded-groups" },
    // The edge (a proxy) names the person on every request of the page.
    { headers: { "x-forwarded-email": "ann@acme.test" } }
  )
  ;({ gw, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

const open = async (width: number) => {
  await page.setViewportSize({ width, height: 900 })
  await page.goto("about:blank")
  await page.goto(`${gw!.url}/`)
  await page.getByRole("heading", { name: "Inbox" }).waitFor()
}

const card = (title: string) => page.getByRole("listitem").filter({ has: page.getByRole("link", { name: title }) })

const sidewaysScroll = () => page.evaluate("document.documentElement.scrollWidth - innerWidth") as Promise<number>

describe("the inbox in the console", { timeout: 120_000 }, () => {
  it("opens on my waiting steps with entity, step, due date marked overdue and who they wait for; Claim shows the holder", async () => {
    await open(1280)
    const late = card("Close 2026-01 (late)")
    await late.waitFor()
    const text = await late.textContent()
    expect(text).toContain("Prepare the close")
    expect(text).toContain("An approval")
    expect(text).toContain("Acme UK")
    expect(text).toContain("Overdue")
    expect(text).toContain("ann@acme.test or the controllers group")
    expect(await late.getByTestId("claim-holder").textContent()).toBe("nobody")
    expect(await page.getByRole("list", { name: "Waiting, by kind" }).textContent()).toMatch(/1 Approvals/)
    expect(await sidewaysScroll()).toBeLessThanOrEqual(0)
    expect(await seriousViolations(page), "axe at 1280 px").toEqual([])

    await late.getByRole("button", { name: "Claim" }).click()
    await expect.poll(() => late.getByTestId("claim-holder").textContent()).toBe("ann@acme.test")
    await late.getByRole("button", { name: "Release" }).waitFor()
    const claim = await http("GET", `${gw!.url}/v1/inbox?entityId=${ACME_UK}`, undefined, { "x-forwarded-email": "ann@acme.test" })
    expect(claim.body.items.find((i: any) => i.task.id === LATE_TASK)?.claim?.by).toBe("ann@acme.test")

    await late.getByRole("button", { name: "Release" }).click()
    await expect.poll(() => late.getByTestId("claim-holder").textContent()).toBe("nobody")
    expect(errors).toEqual([])
  })

  it("says who holds a step someone claimed first (409), at 390 px with 44 px targets, no sideways scroll, no axe violation", async () => {
    await open(390)
    const late = card("Close 2026-01 (late)")
    await late.getByRole("button", { name: "Claim" }).waitFor()
    // Carol, a controller, claims it just before Ann's claim reaches the gateway.
    let first: { status: number; text: string } | undefined
    await page.route(`**/v1/tasks/${LATE_TASK}/claim`, async (route) => {
      first = await http("POST", `${gw!.url}/v1/tasks/${LATE_TASK}/claim`, {}, {
        "x-forwarded-email": "carol@acme.test",
        "x-forwarded-groups": "controllers"
      })
      await route.continue()
    })
    await late.getByRole("button", { name: "Claim" }).click()
    await expect.poll(() => late.getByRole("alert").textContent()).toMatch(/Someone else has it.*carol@acme\.test/)
    expect(first?.status, first?.text).toBe(200)
    await expect.poll(() => late.getByTestId("claim-holder").textContent()).toBe("carol@acme.test")
    await page.unrouteAll()

    expect(await sidewaysScroll()).toBeLessThanOrEqual(0)
    const small = await page.evaluate(`[...document.querySelectorAll("main button, main .inbox-title, nav a")]
      .filter((el) => el.getClientRects().length > 0)
      .map((el) => { const r = el.getBoundingClientRect(); return { what: el.textContent.trim().slice(0, 30), h: Math.round(r.height) } })
      .filter((t) => t.h < 44)`)
    expect(small).toEqual([])
    expect(await seriousViolations(page), "axe at 390 px").toEqual([])
    expect(errors).toEqual([])
  })
})
