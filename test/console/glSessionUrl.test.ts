/**
 * The console opens the connect session's `sessionUrl` (an upstream's answer, passed through by
 * the gateway) only when it is a web address: a `javascript:` or `data:` link is refused with a
 * message, its popup closed, and no waiting for a connection that cannot come. Real chromium
 * against the built gateway; the session answer is replaced in the browser.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type Browser, type GatewayAndBrowser, startGatewayAndBrowser } from "./browser.js"

let started: GatewayAndBrowser | undefined
let gw: RunningService
let browser: Browser

beforeAll(async () => {
  started = await startGatewayAndBrowser()
  ;({ gw, browser } = started)
  expect((await http("DELETE", `${gw.url}/v1/gl`)).status).toBe(204)
}, 90_000)
afterAll(() => started?.close())

describe("the GL connect link", { timeout: 60_000 }, () => {
  for (const link of ["javascript:document.title='owned'", "data:text/html,<h1>owned</h1>"]) {
    it(`is not followed when it is ${link.split(":")[0]}:`, async () => {
      const page = await browser!.context.newPage()
      try {
        await page.route("**/v1/gl/connect/session", (route) =>
          route.fulfill({ status: 200, json: { sessionUrl: link, consumerId: "00000000-0000-4000-8000-000000000000" } }))
        await page.goto(`${gw!.url}/#/gl`)
        await expect.poll(() => page.getByTestId("gl-status").textContent()).toContain("Not connected")
        const popups: Array<string> = []
        browser!.context.on("page", (p) => void popups.push(p.url()))
        await page.getByRole("button", { name: "Connect", exact: true }).click()
        await expect.poll(() => page.getByRole("alert").textContent(), { timeout: 5000 }).toMatch(/not a web address/)
        expect(await page.getByRole("status").count()).toBe(0) // not waiting
        for (const p of browser!.context.pages()) expect(p.url()).not.toMatch(/^(javascript|data):/)
        expect(await page.locator("a[href^='javascript'], a[href^='data']").count()).toBe(0)
      } finally {
        await page.close()
      }
    })
  }
})
