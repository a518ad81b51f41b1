/**
 * The console's timeline says who did what: against the built gateway with an
 * edge that names the actor (SVC_ACTOR_HEADER), changes made through the API with that header
 * (a task started, a file uploaded, a cell edited directly and a row rejected by row action,
 * a step approved with comments) appear in the timeline panel as sentences: the actor, the
 * step's title as the console knows it, old → new values in the reader's number format, the
 * time in the reader's locale. All as text (no markup from the payload), and axe stays clean.
 */
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type ConsoleUnderTest, seriousViolations, startConsole } from "./browser.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70" // expense-review at review_expenses, with rows
const FLIGHT_ROW = "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86" // Delta Air Lines, amount_gross 1240
const UBER_ROW = "9c1e3a57-8d0f-4b2c-8e4a-7f9b1d3f5ba8" // Uber, NEEDS_ATTENTION
const ANN = "ann@acme.example"
const BOB = "bob.controller@acme.example"

let run: ConsoleUnderTest | undefined
let gw: RunningService
let page: Page
let errors: Array<string>

beforeAll(async () => {
  // The demo fixture (no seed file), bound to acme (the tenant an unset SVC_TENANT_SLUG binds).
  run = await startConsole({ SVC_ACTOR_HEADER: "x-forwarded-email" })
  ;({ gw, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

const as = (actor: string) => ({ "x-forwarded-email": actor })
const write = async (method: string, path: string, body: unknown, actor: string) => {
  const res = await http(method, `${gw!.url}${path}`, body, as(actor))
  expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300)
  return res.body
}
/** The feed's line for the event of `seq`, once it is shown. */
const lineOf = async (seq: number) => {
  const li = page.locator(`li[data-seq="${seq}"]`)
  await li.waitFor({ timeout: 10_000 })
  return li
}
const eventsOf = async (taskId: string) =>
  (await http("GET", `${gw!.url}/v1/tasks/${taskId}/events`)).body.events as Array<{ seq: number; type: string; createdAt: string }>
const seqOf = async (taskId: string, type: string) => {
  const e = (await eventsOf(taskId)).filter((x) => x.type === type).at(-1)
  expect(e, `a ${type} event`).toBeDefined()
  return e!
}

describe("the console's timeline names who did what", { timeout: 120_000 }, () => {
  it("shows a cell edit's old and new value, a row reject's previous status and an approval's step title and comments, with the actor", async () => {
    await page.goto(`${gw!.url}/#/tasks/${REVIEW_TASK}`)
    // The console has seen the current step (its title) before the changes arrive.
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor()

    await write("PATCH", `/v1/subledgers/expenses/${FLIGHT_ROW}`, { field: "amount_gross", value: 124 }, BOB)
    await write("POST", `/v1/tasks/${REVIEW_TASK}/row-action`, { ledger: "expenses", action: "reject_row", rowId: UBER_ROW }, BOB)
    await write("POST", `/v1/tasks/${REVIEW_TASK}/action`, { type: "approved", comments: "<b>looks</b> good" }, ANN)

    const edited = await seqOf(REVIEW_TASK, "row.edited")
    const editLine = await lineOf(edited.seq)
    // The field's label, the row's number in the review table, amounts in the row's currency.
    const [before, after] = await page.evaluate(`[1240, 124].map((n) => n.toLocaleString(undefined, { style: "currency", currency: "USD" }))`) as [string, string]
    await expect.poll(() => editLine.textContent()).toContain(
      `${BOB} edited Amount gross of row 2 (Delta Air Lines): ${before} → ${after}, directly in the ledger`
    )
    // When, in the reader's locale, machine-readable beside it.
    const time = editLine.locator("time")
    expect(await time.getAttribute("datetime")).toBe(edited.createdAt)
    expect(await time.textContent()).toBe(
      await page.evaluate(`new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" }).format(new Date(${JSON.stringify(edited.createdAt)}))`)
    )

    const rejectLine = await lineOf((await seqOf(REVIEW_TASK, "row.rejected")).seq)
    expect(await rejectLine.textContent()).toContain(
      `${BOB} rejected row 4 (Uber), previously needs attention`
    )

    const approveLine = await lineOf((await seqOf(REVIEW_TASK, "step.completed")).seq)
    expect(await approveLine.textContent()).toContain(`${ANN} approved Review flagged expenses: `)
    // Comments are text, never markup.
    expect(await approveLine.locator("q").textContent()).toBe("<b>looks</b> good")
    expect(await approveLine.locator("b").count()).toBe(0)

    // Events of other producers keep their generic line: the seeded worker event.
    expect(await (await lineOf(1)).textContent()).toMatch(/^Step completed from Receipts step \(worker\)Step: upload_receipts/)
    expect(await seriousViolations(page)).toEqual([])
  })

  it("shows a started task and an upload with the file's name and size", async () => {
    const task = await write("POST", `/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } }, ANN)
    await page.goto(`${gw!.url}/#/tasks/${task.id}`)
    await page.getByRole("heading", { name: "Current step: Upload receipts" }).waitFor()
    await write("POST", `/v1/tasks/${task.id}/files/ingest`, {
      source: "receipts",
      fileName: "receipt.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.alloc(12_500, 7).toString("base64") },
      signalTaskId: task.id,
      signalName: "file_submitted"
    }, BOB)

    const created = await lineOf((await seqOf(task.id, "task.created")).seq)
    expect(await created.textContent()).toContain(`${ANN} started Expense review 2026-11 (Expense review) with period 2026-11`)
    const stored = await lineOf((await seqOf(task.id, "file.stored")).seq)
    expect(await stored.textContent()).toContain(`${BOB} uploaded receipt.pdf (12.2 KB) to receipts`)
    const submitted = await lineOf((await seqOf(task.id, "source.submitted")).seq)
    expect(await submitted.textContent()).toContain("receipt.pdf was submitted to Upload receipts")
    const completed = await lineOf((await seqOf(task.id, "step.completed")).seq)
    expect(await completed.textContent()).toContain(`${BOB} completed Upload receipts`)
    expect(await seriousViolations(page)).toEqual([])
  })

  it("raised no uncaught error in the page", () => {
    expect(errors).toEqual([])
  })
})
