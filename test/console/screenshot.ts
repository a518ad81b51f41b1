/**
 * `npm run console:screenshot`: docs/console-task.png, the task screen of the demo's expense
 * review (a table step with a reasoning panel and files), taken from the real gateway on a
 * scratch copy of the demo fixture in headless chromium.
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
const OUT = join(ROOT, "docs", "console-task.png")

if (consoleStaleness() !== undefined) await buildConsole()
const dir = mkdtempSync(join(tmpdir(), "console-shot-"))
const gw = await startService({ SVC_TENANT_SLUG: "acme", SVC_SEED_FILE: join(ROOT, "fixtures", "demo.json"), SVC_DATABASE_URL: `file:${join(dir, "w.db")}` })
const browser = await launch().catch(async (e) => {
  await gw.stop()
  throw e
})
try {
  const page = await browser.context.newPage()
  await page.goto(`${gw.url}/#/tasks/${TASK}`)
  await page.getByRole("heading", { name: /^Current step/ }).waitFor()
  await page.locator("li[data-seq]").first().waitFor()
  await page.getByRole("link", { name: /^Download / }).first().waitFor()
  await page.screenshot({ path: OUT, fullPage: true })
  process.stdout.write(`wrote ${OUT}\n`)
} finally {
  await browser.close()
  await gw.stop()
  rmSync(dir, { recursive: true, force: true })
}
