/**
 * The console takes a task id from its address (#/tasks/<percent-encoded id>) and hands it to
 * the typed client: an id whose decoded form holds `/../<another task>` must reach the gateway
 * as one path segment, so the page never shows (or offers actions on) the other task.
 * Real chromium against the built gateway.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningService } from "../support/process.js"
import { type Browser, type GatewayAndBrowser, startGatewayAndBrowser } from "./browser.js"

const TASK_A = "694ebd37-72d4-4ae6-b944-eb027435cd70" // Expense review 2026-10
const TASK_B = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20" // Expense review 2026-11
const TITLE_B = "Expense review 2026-11"

let started: GatewayAndBrowser | undefined
let gw: RunningService
let browser: Browser

beforeAll(async () => {
  started = await startGatewayAndBrowser()
  ;({ gw, browser } = started)
}, 90_000)
afterAll(() => started?.close())

describe("a task id from the console's address", { timeout: 60_000 }, () => {
  for (
    const [name, encoded] of [
      ["with %2F..%2F", `${TASK_A}%3As%3Ax%2F..%2F${TASK_B}`],
      ["with %2F..%2F and colons unencoded", `${TASK_A}:s:x%2F..%2F${TASK_B}`],
      ["with ?", `${TASK_A}%3As%3Ax%3F%2F..%2F${TASK_B}`]
    ] as const
  ) {
    it(`${name} never reaches the other task`, async () => {
      // A fresh page each time: a hash change alone would not load the console anew.
      const page: Page = await browser!.context.newPage()
      const paths: Array<string> = []
      page.on("request", (r) => void paths.push(new URL(r.url()).pathname))
      try {
        await page.goto(`${gw!.url}/#/tasks/${encoded}`)
        // The page settles on a heading other than the loading one: the task the id names, or "Task" with an error.
        await expect.poll(async () => (await page.locator("p", { hasText: "Loading" }).count()), { timeout: 10_000 }).toBe(0)
        await page.waitForTimeout(500)
        expect(await page.locator("h1").first().textContent()).not.toBe(TITLE_B)
        const api = paths.filter((p) => p.startsWith("/v1/"))
        expect(api.length).toBeGreaterThan(0)
        expect(api.filter((p) => p.startsWith(`/v1/tasks/${TASK_B}`))).toEqual([])
        // Every task call carried the whole id as its one segment.
        for (const p of api.filter((p) => p.startsWith("/v1/tasks/"))) {
          expect(decodeURIComponent(p.split("/")[3]!)).toBe(decodeURIComponent(encoded))
        }
      } finally {
        await page.close()
      }
    })
  }
})
