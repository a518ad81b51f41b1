/**
 * The console opens the connect session's `sessionUrl` (an upstream's answer, passed through by
 * the gateway) only when it is a web address: a `javascript:` or `data:` link is refused with a
 * message, its popup closed, and no waiting for a connection that cannot come. Real chromium
 * against the built gateway; the session answer is replaced in the browser.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { type Browser, launch } from "./browser.js"

let dir = ""
let gw: RunningService | undefined
let browser: Browser | undefined

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "console-gl-url-"))
  ;[gw, browser] = await Promise.all([
    startBuilt({ SVC_TENANT_SLUG: "acme", SVC_DATABASE_URL: `file:${join(dir, "w.db")}` }),
    launch()
  ])
  expect((await http("DELETE", `${gw.url}/v1/gl`)).status).toBe(204)
}, 90_000)
afterAll(async () => {
  await Promise.allSettled([browser?.close(), gw?.stop()])
  rmSync(dir, { recursive: true, force: true })
})

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
