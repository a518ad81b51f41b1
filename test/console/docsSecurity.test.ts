/**
 * The API reference pages (/docs on the gateway's port, /workspace/docs on the admin listener)
 * carry the console's security headers on the built process: a Content-Security-Policy that
 * allows only the page's own inline scripts (by hash) and no framing, nosniff, no Referer, a
 * browsing context of their own. And the page still works under it in Chromium: the reference
 * renders, with no policy violation reported.
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { launch } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))

let gw: BuiltGateway | undefined

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_SEED_FILE: FIXTURE, SVC_ADMIN_PORT: "0" })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
})

const expectPageHeaders = async (res: Response) => {
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toMatch(/^text\/html/)
  expect(res.headers.get("x-content-type-options")).toBe("nosniff")
  expect(res.headers.get("referrer-policy")).toBe("no-referrer")
  expect(res.headers.get("cross-origin-opener-policy")).toBe("same-origin")
  expect(res.headers.get("x-frame-options")).toBe("DENY")
  const csp = res.headers.get("content-security-policy") ?? ""
  for (const directive of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "connect-src 'self'", "form-action 'self'"]) {
    expect(csp).toContain(directive)
  }
  // Inline scripts by hash only: no 'unsafe-inline' or 'unsafe-eval' for scripts, no remote origin.
  const scripts = /script-src ([^;]*)/.exec(csp)?.[1] ?? ""
  expect(scripts).toMatch(/^'self'( 'sha256-[A-Za-z0-9+/=]+')+$/)
  return res.text()
}

describe("the API reference pages carry the console's security headers", { timeout: 90_000 }, () => {
  it("/docs and the admin listener's /workspace/docs, the same answer twice", async () => {
    await expectPageHeaders(await fetch(`${gw!.url}/docs`))
    const again = await fetch(`${gw!.url}/docs`)
    await expectPageHeaders(again)
    await expectPageHeaders(await fetch(`${gw!.adminUrl}/workspace/docs`))
  })

  it("/docs renders in Chromium under its policy, with no violation", async () => {
    const browser = await launch()
    try {
      const page = await browser.context.newPage()
      const violations: Array<string> = []
      page.on("console", (m) => {
        if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text())
      })
      await page.goto(`${gw!.url}/docs`)
      // Scalar renders the operations of the document: the health endpoint among them.
      await page.getByText("/v1/health", { exact: false }).first().waitFor({ timeout: 30_000 })
      expect(violations).toEqual([])
    } finally {
      await browser.close()
    }
  })
})
