/**
 * The task console in a real browser (Debian chromium through playwright-core) against the
 * real gateway process on the demo fixture: entity to COMPLETED through a file step and two
 * approvals (the task started by keyboard only), a table row edited and another rejected, a
 * start form refusing a bad value, a posted event appearing within a second, the GL popup
 * flow, and an axe-core check of every screen on the way.
 *
 * Works against gateways with and without the live event stream and `args.rows` on table
 * steps: the page falls back to polling, and the table test finds its rows in `args.rows`
 * when the step carries them, else acts by the fixture's row ids.
 */
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type Browser, type ConsoleUnderTest, seriousViolations, startConsole, tabTo } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("../../fixtures/demo.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const EDIT_ROW = "0349944d-fb03-40cf-a73a-21b10c2a61e9"
const REJECT_ROW = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86"
// 1x1 transparent PNG.
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64")

let run: ConsoleUnderTest | undefined
let gw: RunningService
let browser: Browser
let page: Page
let errors: Array<string>

beforeAll(async () => {
  run = await startConsole({ SVC_SEED_FILE: FIXTURE })
  ;({ gw, browser, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

const open = async (hash: string) => {
  await page.goto(`${gw!.url}/${hash}`)
  await page.locator("h1").first().waitFor()
}
const expectAccessible = async (screen: string) => {
  expect(await seriousViolations(page), `axe on ${screen}`).toEqual([])
}
const heading = () => page.locator("h1")

describe("the task console in a browser", { timeout: 120_000 }, () => {
  it("lists the entities and an entity's task board with status, priority and awaiting, refreshing itself", async () => {
    await open("#/entities")
    await expect.poll(() => heading().textContent()).toBe("Entities")
    await page.getByRole("link", { name: "Acme US Inc." }).waitFor()
    await expectAccessible("entities")

    await page.getByRole("link", { name: "Acme US Inc." }).click()
    const review = page.getByRole("row").filter({ hasText: "Expense review 2026-10" })
    await review.waitFor()
    // Every demo task is HIGH: said once above the board, not on each row (a priority shows where it differs).
    expect(await review.textContent()).toMatch(/In progress.*A review of rows/)
    expect(await review.textContent()).not.toMatch(/priority/)
    expect(await page.getByTestId("usual-priority").textContent()).toMatch(/^All \d+ tasks are high priority\.$/)
    await expectAccessible("task board")

    // A task started elsewhere shows up without a reload.
    const created = await http("POST", `${gw!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2025-01" } })
    expect(created.status).toBe(201)
    await page.getByRole("link", { name: created.body.title }).first().waitFor({ timeout: 8000 })
  })

  it("refuses a bad start value at its field before sending anything", async () => {
    await open(`#/entities/${ACME_US}/start`)
    await page.getByLabel("Workflow").selectOption("expense-review")
    await expectAccessible("start form")
    let posts = 0
    const count = (r: { method(): string; url(): string }) => void (r.method() === "POST" && r.url().includes("/tasks") && posts++)
    page.on("request", count)
    const period = page.getByLabel("period (required)")
    expect(await page.getByLabel("threshold").inputValue()).toBe("75") // defaults filled in
    expect(await page.getByLabel("currency").inputValue()).toBe("0") // USD, the default choice
    await period.fill("2026-13")
    await page.getByRole("button", { name: "Start task", exact: true }).click()
    // The format the pattern asks for, in words, never the regular expression.
    await expect.poll(() => page.locator("#param-period-error").textContent()).toBe("Period must look like YYYY-MM")
    expect(await period.getAttribute("aria-invalid")).toBe("true")
    expect(await page.evaluate("document.activeElement.id")).toBe("param-period")
    await expectAccessible("start form with an error")
    page.off("request", count)
    expect(posts).toBe(0)
  })

  it("shows a 400 from the gateway at the field its message names", async () => {
    await open(`#/entities/${ACME_US}/start`)
    await page.getByLabel("Workflow").selectOption("expense-review")
    await page.getByLabel("period (required)").fill("2026-11")
    // The gateway's own check agrees with the form's; a rule only the server knows is simulated here.
    await page.route("**/v1/entities/*/tasks", (route) =>
      route.request().method() === "POST"
        ? route.fulfill({
          status: 400,
          json: { statusCode: 400, message: "context.currency: must be one of \"USD\"", error: "Bad Request" }
        })
        : route.fallback())
    try {
      await page.getByRole("button", { name: "Start task", exact: true }).click()
      await expect.poll(() => page.locator("#param-currency-error").textContent()).toContain("must be one of")
      expect(await page.getByLabel("currency").getAttribute("aria-invalid")).toBe("true")
      expect(await page.getByLabel("period (required)").getAttribute("aria-invalid")).toBeNull()
    } finally {
      await page.unroute("**/v1/entities/*/tasks")
    }
  })

  let taskId = ""

  it("starts a task by keyboard only", async () => {
    await open(`#/entities/${ACME_US}`)
    await page.getByRole("link", { name: "New task" }).waitFor()
    await tabTo(page, /^New task$/)
    await page.keyboard.press("Enter")
    await page.getByLabel("Workflow").waitFor()
    await tabTo(page, /Workflow/)
    await page.keyboard.type("Expense review")
    expect(await page.getByLabel("Workflow").inputValue()).toBe("expense-review")
    await tabTo(page, /Period/)
    await page.keyboard.type("2026-11")
    await tabTo(page, /^Start task$/)
    await page.keyboard.press("Enter")
    await page.waitForURL(/#\/tasks\//)
    taskId = decodeURIComponent(new URL(page.url()).hash.replace("#/tasks/", ""))
    await page.getByRole("heading", { name: "Current step: Upload receipts" }).waitFor()
    expect((await http("GET", `${gw!.url}/v1/tasks/${taskId}/ui`)).body.task.status).toBe("IN_PROGRESS")
  })

  it("takes that task to COMPLETED through the file step and the approvals", async () => {
    await expectAccessible("task: file upload step")
    const picker = page.getByLabel("File to upload")
    expect(await picker.getAttribute("accept")).toBe("application/pdf,image/png")
    // A type the step does not accept is refused in place.
    await picker.setInputFiles({ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") })
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("not an accepted type")
    // The drop zone takes the same types: a dropped text file is refused, a dropped PNG taken.
    const drop = (name: string, type: string, base64: string) =>
      page.evaluate(`(() => {
        const bytes = Uint8Array.from(atob(${JSON.stringify(base64)}), (c) => c.charCodeAt(0))
        const dt = new DataTransfer()
        dt.items.add(new File([bytes], ${JSON.stringify(name)}, { type: ${JSON.stringify(type)} }))
        document.querySelector("[data-testid=dropzone]").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }))
      })()`)
    await picker.setInputFiles([])
    await drop("notes.txt", "text/plain", Buffer.from("hi").toString("base64"))
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("notes.txt is not an accepted type")
    await drop("receipt.png", "image/png", PNG.toString("base64"))
    await expect.poll(() => page.getByTestId("dropzone").textContent()).toBe("Ready: receipt.png")
    await page.getByRole("button", { name: "Upload", exact: true }).click()
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor({ timeout: 10_000 })
    // The uploaded file is listed with a working download link.
    const link = page.getByRole("link", { name: "Download receipt.png" })
    await link.waitFor({ timeout: 10_000 })
    const href = await link.getAttribute("href")
    expect(Buffer.from(await (await fetch(new URL(href!, `${gw!.url}/`))).arrayBuffer()).equals(PNG)).toBe(true)
    // Sent as its own bytes (the raw upload), not as base64 in JSON.
    // (The request log is written in batches: polled for.)
    await expect.poll(() => gw!.output()).toMatch(/"method":"POST","route":"\/v1\/tasks\/:taskId\/files\/raw","path":"[^"]+","status":201/)

    await expectAccessible("task: table step")
    await page.getByRole("button", { name: "Approve", exact: true }).click()
    // Rows of the review still need attention: the console asks before approving.
    const listed = (await http("GET", `${gw!.url}/v1/tasks/${taskId}/ui`)).body.step.args.rows as Array<{ status: string }> | undefined
    if ((listed ?? []).some((r) => r.status === "NEEDS_ATTENTION")) {
      const warning = page.getByRole("dialog")
      await warning.waitFor()
      expect(await warning.textContent()).toMatch(/still needs? attention/)
      await expectAccessible("task: approve warning")
      await page.getByRole("button", { name: "Approve anyway" }).click()
    }
    await page.getByRole("heading", { name: "Current step: Sign off" }).waitFor({ timeout: 10_000 })
    await expectAccessible("task: approval step")
    await page.getByLabel("Comments").fill("All receipts present")
    await page.getByRole("button", { name: "Approve", exact: true }).click()
    await page.getByText("This task is complete.").waitFor({ timeout: 10_000 })
    expect((await http("GET", `${gw!.url}/v1/tasks/${taskId}/ui`)).body.task.status).toBe("COMPLETED")

    // A completed step's snapshot is fetched when opened.
    let snapshotRequests = 0
    const count = (r: { url(): string }) => void (r.url().endsWith("/snapshots") && snapshotRequests++)
    page.on("request", count)
    await page.getByRole("button", { name: "Show what was decided at Sign off" }).click()
    await expect.poll(() => page.getByLabel("What was decided at Sign off").textContent()).toContain("All receipts present")
    page.off("request", count)
    expect(snapshotRequests).toBe(1)
    await expectAccessible("task: completed")
  })

  it("edits a row and rejects another on a table step, and shows a bad value's error at its field", async () => {
    await open(`#/tasks/${REVIEW_TASK}`)
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor()
    await expectAccessible("task: table step with rows")
    const rows = (await http("GET", `${gw!.url}/v1/tasks/${REVIEW_TASK}/ui`)).body.step.args.rows as
      | Array<{ id: string }>
      | undefined
    if (Array.isArray(rows)) {
      // The step carries its rows: act in the table.
      const n = rows.findIndex((r) => r.id === EDIT_ROW) + 1
      const m = rows.findIndex((r) => r.id === REJECT_ROW) + 1
      expect(n).toBeGreaterThan(0)
      expect(m).toBeGreaterThan(0)
      // Values are text; a click opens the cell's editor.
      const row = page.locator(`tr[data-row-id="${EDIT_ROW}"]`)
      await row.getByRole("gridcell", { name: "Blue Bottle" }).click()
      const merchant = page.getByLabel(`Merchant, row ${n}`)
      await merchant.fill("Blue Bottle Coffee")
      await merchant.press("Enter")
      await expect.poll(() => page.getByRole("status").textContent()).toBe(`Merchant of row ${n} saved: Blue Bottle Coffee`)
      await row.getByRole("gridcell", { name: "$182.40" }).click()
      const amount = page.getByLabel(`Amount gross, row ${n}`)
      await amount.fill("lots")
      await amount.press("Enter")
      await expect.poll(() => page.locator(`#err-${EDIT_ROW}-amount_gross`).textContent()).toBe("Amount gross must be a decimal number")
      expect(await page.getByLabel(`Amount gross, row ${n}`).getAttribute("aria-invalid")).toBe("true")
      await amount.press("Escape")
      await page.getByRole("button", { name: `Reject row ${m}` }).click()
      await page.getByRole("dialog").getByRole("button", { name: `Reject row ${m}` }).click()
      // The table shows what the workspace now holds.
      await expect.poll(() => page.locator(`tr[data-row-id="${REJECT_ROW}"]`).getAttribute("data-status"), { timeout: 10_000 }).toBe("REJECTED")
      await expect.poll(() => row.textContent(), { timeout: 10_000 }).toContain("Blue Bottle Coffee")
    } else {
      // No rows in the step's args: act by the fixture's row ids.
      await page.getByLabel("Row id").fill(EDIT_ROW)
      await page.getByLabel("Field").fill("merchant")
      await page.getByLabel("New value").fill("Blue Bottle Coffee")
      await page.getByRole("button", { name: "Edit cell" }).click()
      await expect.poll(() => page.getByRole("status").textContent()).toContain("merchant of row")
      await page.getByLabel("Field").fill("amount_gross")
      await page.getByLabel("New value").fill("lots")
      await page.getByRole("button", { name: "Edit cell" }).click()
      await expect.poll(() => page.locator("#row-action-value-error").textContent()).toContain("amount_gross")
      expect(await page.getByLabel("New value").getAttribute("aria-invalid")).toBe("true")
      await page.getByLabel("Row id").fill(REJECT_ROW)
      await page.getByRole("button", { name: "Reject row", exact: true }).click()
      await page.getByRole("dialog").getByRole("button", { name: "Reject row", exact: true }).click()
      await expect.poll(() => page.getByRole("status").textContent()).toContain("rejected")
    }
    await expectAccessible("task: table step after row actions")
    // The workspace holds the reject: the row now refuses an edit as REJECTED.
    await expect.poll(async () => {
      const res = await http("PATCH", `${gw!.url}/v1/subledgers/expenses/${REJECT_ROW}`, { field: "merchant", value: "x" })
      return res.body.currentStatus
    }, { timeout: 10_000 }).toBe("REJECTED")
  })

  it("shows an event posted through the API within a second, reasoning deltas of one group in one panel", async () => {
    await open(`#/tasks/${REVIEW_TASK}`)
    const transport = page.locator("[data-transport]")
    await expect.poll(() => transport.getAttribute("data-transport"), { timeout: 10_000 }).not.toBe("connecting")
    await page.locator("li[data-seq]").first().waitFor()
    const listed = (await http("GET", `${gw!.url}/v1/tasks/${REVIEW_TASK}/events`)).body.events as Array<{ seq: number }>
    let seq = Math.max(...listed.map((e) => e.seq)) + 1
    const post = (body: Record<string, unknown>) =>
      http("POST", `${gw!.url}/v1/tasks/${REVIEW_TASK}/events`, { source: "worker", seq: seq++, ...body })

    const note = `posted at ${Date.now()}`
    const posted = await post({ type: "note.added", payload: { text: note } })
    expect(posted.status).toBe(200)
    const started = performance.now()
    await page.locator(`li[data-seq="${posted.body.event.seq}"]`).filter({ hasText: note }).waitFor({ timeout: 1000 })
    expect(performance.now() - started).toBeLessThan(1000)

    expect((await post({ type: "reasoning.delta", groupKey: "console-test", sourceLabel: "Test reasoner", payload: { text: "First half, " } })).status).toBe(200)
    expect((await post({ type: "reasoning.delta", groupKey: "console-test", sourceLabel: "Test reasoner", payload: { text: "second half." } })).status).toBe(200)
    const panel = page.locator('[data-group="console-test"]')
    await expect.poll(() => panel.locator(".reasoning").textContent(), { timeout: 2000 }).toBe("First half, second half.")
    expect(await panel.count()).toBe(1)
    // Live through the stream, and no failed read of the list shown in the timeline.
    expect(await transport.getAttribute("data-transport")).toBe("live")
    expect(await page.locator('section[aria-labelledby="timeline-heading"] .error').count()).toBe(0)
    await expectAccessible("task: timeline")
  })

  it("disconnects the GL, then connects it through the popup, polling the status until connected", async () => {
    await open("#/gl")
    await expect.poll(() => page.getByTestId("gl-status").textContent()).toContain("Connected")
    await expectAccessible("GL connected")
    await page.getByRole("button", { name: "Disconnect", exact: true }).click()
    // Asked first, in the page.
    await page.getByRole("dialog").getByRole("button", { name: "Disconnect", exact: true }).click()
    await expect.poll(() => page.getByTestId("gl-status").textContent()).toContain("Not connected")
    expect((await http("GET", `${gw!.url}/v1/gl/status`)).body.connected).toBe(false)
    await expectAccessible("GL not connected")

    const popupOpened = browser!.context.waitForEvent("page")
    await page.getByRole("button", { name: "Connect", exact: true }).click()
    const popup = await popupOpened
    await popup.waitForURL(/\/workspace\/gl\/connect\//)
    await popup.getByRole("button", { name: "Authorize" }).click()
    await popup.getByText("Connected. You can close this window.").waitFor()
    await popup.close()
    await expect.poll(() => page.getByTestId("gl-status").textContent(), { timeout: 10_000 }).toMatch(/^Connected/)
    await page.getByRole("button", { name: "Disconnect", exact: true }).waitFor()
    expect((await http("GET", `${gw!.url}/v1/gl/status`)).body.connected).toBe(true)
  })

  it("the axe check does find serious violations when a screen has them", async () => {
    await open("#/gl")
    await page.evaluate(`(() => {
      const b = document.createElement("button"); document.querySelector("main").append(b)
      const i = document.createElement("img"); i.src = "data:,"; document.querySelector("main").append(i)
    })()`)
    const ids = (await seriousViolations(page)).map((v) => v.id)
    expect(ids).toEqual(expect.arrayContaining(["button-name", "image-alt"]))
  })

  it("raised no uncaught error in the page", () => {
    expect(errors).toEqual([])
  })
})
