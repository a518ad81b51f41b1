/**
 * The console under a reverse proxy's path prefix, where SVC_PUBLIC_URL=https://example.com/acme
 * hands out `.../acme/#/tasks/<id>` (decision links, task.waiting webhooks): the page's assets,
 * API calls, event stream and download links go under the prefix. They had gone to the origin's
 * root (`/console/main-*.js`, `location.origin + /v1`): the page loaded empty. Real Chromium, the
 * built gateway behind a proxy that serves it under /acme and nothing else.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { RunningService } from "../support/process.js"
import { type Browser, type GatewayAndBrowser, startGatewayAndBrowser } from "./browser.js"

const PREFIX = "/acme"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"

let started: GatewayAndBrowser | undefined
let gw: RunningService
let browser: Browser
let proxy: http.Server
let proxyUrl: string
/** Paths the page asked the proxy for outside the prefix (each a 404 there). */
const outside: Array<string> = []
/** Paths it asked for under the prefix. */
const inside: Array<string> = []

beforeAll(async () => {
  started = await startGatewayAndBrowser()
  ;({ gw, browser } = started)
  const target = new URL(gw.url)
  proxy = http.createServer((req, res) => {
    const url = req.url ?? "/"
    if (url !== PREFIX && !url.startsWith(`${PREFIX}/`) && !url.startsWith(`${PREFIX}?`)) {
      outside.push(url)
      res.writeHead(404).end()
      return
    }
    inside.push(url)
    const upstream = http.request(
      { host: target.hostname, port: target.port, method: req.method, path: url.slice(PREFIX.length) || "/", headers: { ...req.headers, host: target.host } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      }
    )
    upstream.on("error", () => res.destroy())
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
}, 90_000)

afterAll(async () => {
  proxy?.closeAllConnections()
  await new Promise((r) => proxy ? proxy.close(r) : r(undefined))
  await started?.close()
})

describe("the console under a path prefix", { timeout: 60_000 }, () => {
  it("loads, lists, follows the timeline and downloads under the prefix, asking nothing of the root", async () => {
    const page = await browser.context.newPage()
    try {
      await page.goto(`${proxyUrl}${PREFIX}/#/tasks/${REVIEW_TASK}`)
      await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor({ timeout: 20_000 })
      const link = page.getByRole("link", { name: "Download receipt-001.txt" })
      await link.waitFor()
      const href = await link.evaluate((a) => (a as unknown as { href: string }).href)
      expect(href.startsWith(`${proxyUrl}${PREFIX}/v1/tasks/${REVIEW_TASK}/files/`)).toBe(true)
      const download = await page.evaluate(async (url) => (await fetch(url)).text(), href)
      expect(download).toBe("Blue Bottle 182.40 USD\n")
      // The timeline's stream went through the prefix too.
      await expect.poll(() => inside.some((p) => p.startsWith(`${PREFIX}/v1/tasks/${REVIEW_TASK}/events`))).toBe(true)
      await page.goto(`${proxyUrl}${PREFIX}/#/`)
      await page.getByRole("link", { name: "API reference" }).waitFor()
      expect(await page.getByRole("link", { name: "API reference" }).evaluate((a) => (a as unknown as { href: string }).href)).toBe(`${proxyUrl}${PREFIX}/docs`)
      expect(outside).toEqual([])
    } finally {
      await page.close()
    }
  })
})
