/**
 * Every console screen at a phone's width (390 px) and a laptop's (1280 px) and a wide screen's
 * (1920 px), against the real gateway on the demo fixture, in Chromium: the page never scrolls
 * sideways (a wide table scrolls inside its own region, which says so), the review table's row
 * actions are on screen at 1280 px without scrolling, touch targets are at least 44 px at 390 px,
 * and axe finds no serious or critical violation.
 */
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningService } from "../support/process.js"
import { type ConsoleUnderTest, seriousViolations, startConsole } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("../../fixtures/demo.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

let run: ConsoleUnderTest | undefined
let gw: RunningService
let page: Page
let errors: Array<string>

beforeAll(async () => {
  run = await startConsole({ SVC_SEED_FILE: FIXTURE })
  ;({ gw, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

/** Each screen: its address and what shows it is loaded. */
const SCREENS: ReadonlyArray<{ name: string; hash: string; ready: (p: Page) => Promise<unknown> }> = [
  { name: "entities", hash: "#/entities", ready: (p) => p.getByRole("link", { name: "Acme US Inc." }).waitFor() },
  { name: "task board", hash: `#/entities/${ACME_US}`, ready: (p) => p.getByRole("link", { name: "Expense review 2026-10" }).first().waitFor() },
  { name: "start form", hash: `#/entities/${ACME_US}/start`, ready: (p) => p.getByLabel("Workflow").waitFor() },
  { name: "review step", hash: `#/tasks/${REVIEW_TASK}`, ready: (p) => p.getByRole("grid", { name: /Rows to review/ }).waitFor() },
  { name: "GL", hash: "#/gl", ready: (p) => p.getByTestId("gl-status").waitFor() },
  { name: "missing", hash: "#/nowhere", ready: (p) => p.getByRole("heading", { name: "Not found" }).waitFor() }
]

const open = async (hash: string, width: number) => {
  await page.setViewportSize({ width, height: 900 })
  await page.goto(`${gw!.url}/${hash}`)
  await page.locator("h1").first().waitFor()
}

/** The page's width beyond the viewport (0 when it does not scroll sideways), and what sticks out. */
const overflow = (p: Page) =>
  p.evaluate(`(() => {
    const over = document.documentElement.scrollWidth - innerWidth
    const culprits = over <= 0 ? [] : [...document.querySelectorAll("body *")]
      .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5 && el.closest(".scroll-region") === null)
      .slice(0, 5).map((el) => el.tagName + "." + el.className)
    return { over, culprits }
  })()`) as Promise<{ over: number; culprits: Array<string> }>

/** Controls smaller than `min` px in either direction (links inside running text are exempt, WCAG 2.5.8). */
const smallTargets = (p: Page, min: number) =>
  p.evaluate(`(() => [...document.querySelectorAll("button, input, select, textarea, summary, a.button, nav a, [role=gridcell][tabindex], .actions a")]
    .filter((el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden")
    .map((el) => {
      // A checkbox or radio counts with its label, which takes the tap.
      const target = (el.type === "checkbox" || el.type === "radio") && el.closest("label") ? el.closest("label") : el
      const r = target.getBoundingClientRect()
      return { what: el.tagName + " " + (el.getAttribute("aria-label") ?? el.textContent ?? "").trim().slice(0, 30), w: Math.round(r.width), h: Math.round(r.height) }
    })
    .filter((t) => t.w < ${min} || t.h < ${min}))()`) as Promise<Array<{ what: string; w: number; h: number }>>

describe("every screen at 390, 1280 and 1920 px", { timeout: 180_000 }, () => {
  for (const width of [390, 1280, 1920]) {
    for (const screen of SCREENS) {
      it(`${screen.name} at ${width} px: no sideways page scroll, axe clean${width === 390 ? ", 44 px targets" : ""}`, async () => {
        await open(screen.hash, width)
        await screen.ready(page)
        expect(await overflow(page), `${screen.name} at ${width}`).toEqual({ over: expect.toSatisfy((n: number) => n <= 0), culprits: [] })
        if (width === 390) expect(await smallTargets(page, 44), `${screen.name} at 390`).toEqual([])
        else expect(await smallTargets(page, 24), `${screen.name} at ${width}`).toEqual([])
        expect(await seriousViolations(page), `axe on ${screen.name} at ${width}`).toEqual([])
      })
    }
  }

  it("the review table's row actions are on screen at 1280 px without scrolling sideways", async () => {
    await open(`#/tasks/${REVIEW_TASK}`, 1280)
    const grid = page.getByRole("grid", { name: /Rows to review/ })
    await grid.waitFor()
    const buttons = grid.getByRole("button", { name: /^Reject row \d+$/ })
    expect(await buttons.count()).toBeGreaterThan(0)
    for (const b of await buttons.all()) {
      const box = await b.boundingBox()
      const region = await page.locator(".scroll-region").first().boundingBox()
      expect(box, "a reject button is laid out").not.toBeNull()
      // Inside the visible part of the table's region and of the viewport.
      expect(box!.x + box!.width).toBeLessThanOrEqual(Math.min(1280, region!.x + region!.width) + 0.5)
      expect(box!.x).toBeGreaterThanOrEqual(region!.x - 0.5)
    }
    // The reason a row needs attention is in view too.
    const reason = grid.getByRole("gridcell", { name: "Flight booked outside travel portal" })
    const box = await reason.boundingBox()
    expect(box!.x + box!.width).toBeLessThanOrEqual(1280)
  })

  it("a table wider than its region scrolls inside it and says so; at 390 px the actions stay in view", async () => {
    await open(`#/tasks/${REVIEW_TASK}`, 390)
    const region = page.locator(".scroll-region").first()
    await region.waitFor()
    const { scrolls } = await region.evaluate((el) => ({ scrolls: el.scrollWidth > el.clientWidth }))
    expect(scrolls).toBe(true)
    await expect.poll(() => page.getByText("Scroll sideways for more columns").isVisible()).toBe(true)
    const reject = page.getByRole("button", { name: "Reject row 1", exact: true })
    const box = await reject.boundingBox()
    expect(box!.x + box!.width).toBeLessThanOrEqual(390)
  })

  it("raised no uncaught error in the page", () => {
    expect(errors).toEqual([])
  })
})
