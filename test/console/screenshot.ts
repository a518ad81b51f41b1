/**
 * `npm run console:screenshot`: the task screen of the demo's expense review (a table step with a
 * reasoning panel and files) and the entity's task board, each at a laptop's width (1280 px:
 * docs/console-task.png, docs/console-board.png) and a phone's (390 px: docs/console-task-390.png,
 * docs/console-board-390.png), taken from the real gateway on a scratch copy of the demo fixture
 * in headless chromium.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildConsole } from "../../scripts/build-console.mjs"
import { consoleStaleness } from "../../scripts/build-if-stale.mjs"
import { startService } from "../support/process.js"
import { launch } from "./browser.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const ENTITY = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const out = (name: string, width: number) => join(ROOT, "docs", `console-${name}${width === 1280 ? "" : `-${width}`}.png`)

if (consoleStaleness() !== undefined) await buildConsole()
const dir = mkdtempSync(join(tmpdir(), "console-shot-"))
const gw = await startService({ SVC_TENANT_SLUG: "acme", SVC_SEED_FILE: join(ROOT, "fixtures", "demo.json"), SVC_DATABASE_URL: `file:${join(dir, "w.db")}` })
const browser = await launch().catch(async (e) => {
  await gw.stop()
  throw e
})
try {
  const page = await browser.context.newPage()
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 })
    await page.goto("about:blank")
    await page.goto(`${gw.url}/#/entities/${ENTITY}`)
    await page.getByRole("link", { name: "Expense review 2026-10" }).first().waitFor()
    await page.screenshot({ path: out("board", width), fullPage: true })
    process.stdout.write(`wrote ${out("board", width)}\n`)

    await page.goto("about:blank")
    await page.goto(`${gw.url}/#/tasks/${TASK}`)
    await page.getByRole("heading", { name: /^Current step/ }).waitFor()
    await page.locator("li[data-seq]").first().waitFor()
    await page.getByRole("link", { name: /^Download / }).first().waitFor()
    // No focus ring on the heading the screen focuses on arrival.
    await page.evaluate("document.activeElement?.blur()")
    await page.screenshot({ path: out("task", width), fullPage: true })
    process.stdout.write(`wrote ${out("task", width)}\n`)
  }
} finally {
  await browser.close()
  await gw.stop()
  rmSync(dir, { recursive: true, force: true })
}
