/**
 * The console's details where people and agents work, against the built gateway with an identity
 * at the edge (ann@acme.test, in the controllers group), in Chromium at phone and desktop widths
 * with axe: an agent's step says whose it is and opens only once a person takes it over (recorded
 * as a take-over); priority shows only where it says something; a FAILED task says why; "Show
 * what was decided" reads as sentences; a flagged row can be marked resolved (the `resolve_flag`
 * row action, in the timeline) and the approve warning counts what was done; the start form warns
 * of a task of the workflow for that period; "My groups" keeps the steps of the caller's groups
 * (GET /v1/me), not a step named for the caller that also lists a group they are not in.
 */
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type ConsoleUnderTest, seriousViolations, startConsole } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("./details.fixture.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const ACME_UK = "3acc7ce9-d0bf-431a-9528-aa340456a628"
const AGENT_TASK = "11111111-1111-4111-8111-111111111111"
const REVIEW_TASK = "22222222-2222-4222-8222-222222222222"
const FAILED_TASK = "33333333-3333-4333-8333-333333333333"
const DONE_TASK = "44444444-4444-4444-8444-444444444444"
const ROW = {
  coffee: "aaaaaaaa-0001-4000-8000-000000000001",
  flight: "aaaaaaaa-0002-4000-8000-000000000002",
  uber: "aaaaaaaa-0003-4000-8000-000000000003",
  parking: "aaaaaaaa-0004-4000-8000-000000000004"
}
const ANN = { "x-forwarded-email": "ann@acme.test", "x-forwarded-groups": "controllers" }

let run: ConsoleUnderTest | undefined
let gw: RunningService
let page: Page
let errors: Array<string>

beforeAll(async () => {
  run = await startConsole(
    { SVC_SEED_FILE: FIXTURE, SVC_ACTOR_HEADER: "x-forwarded-email", SVC_GROUPS_HEADER: "x-forwarded-groups" },
    // The edge (a proxy) names the person and their groups on every request of the page.
    { headers: ANN }
  )
  ;({ gw, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

const open = async (hash: string, width: number) => {
  await page.setViewportSize({ width, height: 900 })
  await page.goto("about:blank")
  await page.goto(`${gw!.url}/${hash}`)
}

/** No sideways page scroll, and no serious or critical axe violation, at the current width. */
const expectFit = async (what: string) => {
  expect(await page.evaluate("document.documentElement.scrollWidth - innerWidth"), `${what}: sideways scroll`).toBeLessThanOrEqual(0)
  expect(await seriousViolations(page), `${what}: axe`).toEqual([])
}

const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = ANN) =>
  http(method, `${gw!.url}${path}`, body, headers)

describe("the console's details", { timeout: 120_000 }, () => {
  it("an agent's step says whose it is and opens only when a person takes it over, recorded as such (390 px)", async () => {
    await open(`#/tasks/${AGENT_TASK}`, 390)
    await page.getByRole("heading", { name: "Current step: Reconcile the bank" }).waitFor()
    const owner = page.getByTestId("step-owner")
    await expect.poll(() => owner.textContent()).toMatch(/This is the agent 5f0c8e7a's step.*the agent does this work, not you/)
    // Not the person's work: no Approve button until they take it over.
    expect(await page.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0)
    await expectFit("agent's step at 390 px")

    await page.getByRole("button", { name: "Take over from the agent" }).click()
    await expect.poll(() => owner.textContent()).toMatch(/You took this step over from the agent/)
    await page.getByRole("button", { name: "Approve", exact: true }).click()
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor()
    // The timeline tells the take-over and the decision as ann's.
    const feed = page.locator(".feed")
    await expect.poll(() => feed.textContent()).toMatch(/ann@acme\.test took over Reconcile the bank from its agent/)
    await expect.poll(() => feed.textContent()).toMatch(/ann@acme\.test approved Reconcile the bank/)
    const snapshots = await api("GET", `/v1/tasks/${AGENT_TASK}/snapshots`)
    expect(snapshots.body.reconcile).toMatchObject({ decision: "approved", decidedBy: "ann@acme.test" })
    await expectFit("task after the take-over at 390 px")
    expect(errors).toEqual([])
  })

  it("shows priority only where it says something: said once when all share it, marked where a task differs (1280 px)", async () => {
    await open(`#/entities/${ACME_US}`, 1280)
    const rows = page.getByRole("row").filter({ hasText: "Close 2026-" })
    await expect.poll(() => rows.count()).toBe(4)
    expect(await page.getByRole("table", { name: "Tasks" }).textContent()).not.toMatch(/priority/i)
    expect(await page.getByTestId("usual-priority").textContent()).toBe("All 4 tasks are high priority.")
    await expectFit("board, one priority")

    await open(`#/entities/${ACME_UK}`, 390)
    const low = page.getByRole("row").filter({ hasText: "Controllers only" })
    await low.waitFor()
    expect(await low.textContent()).toContain("Low priority")
    expect(await page.getByRole("row").filter({ hasText: "Named or auditors" }).textContent()).not.toMatch(/priority/i)
    expect(await page.getByTestId("usual-priority").textContent()).toBe("Tasks are high priority unless marked.")
    await expectFit("board, mixed priorities at 390 px")
  })

  it("a FAILED task says why, and what was decided reads as sentences, not JSON (1280 and 390 px)", async () => {
    await open(`#/tasks/${FAILED_TASK}`, 1280)
    const failure = page.getByTestId("failure")
    await expect.poll(() => failure.textContent()).toMatch(
      /This task failed\..*Why: bob@acme\.test rejected Review flagged expenses, saying Receipts are for the wrong period \(/
    )
    await expectFit("failed task")

    await open(`#/tasks/${DONE_TASK}`, 390)
    await page.getByRole("button", { name: "Show what was decided at Approve the close" }).click()
    const approve = page.getByRole("group", { name: "What was decided at Approve the close" })
    await expect.poll(() => approve.textContent()).toMatch(
      /carol@acme\.test approved Approve the close through a decision link, saying Ready to file/
    )
    await page.getByRole("button", { name: "Show what was decided at Reconcile the bank" }).click()
    await expect.poll(() => page.getByRole("group", { name: "What was decided at Reconcile the bank" }).textContent()).toMatch(
      /^The agent 5f0c8e7a approved Reconcile the bank, with no comment/
    )
    await page.getByRole("button", { name: "Show what was decided at Review flagged expenses" }).click()
    const review = page.getByRole("group", { name: "What was decided at Review flagged expenses" })
    await expect.poll(() => review.textContent()).toMatch(/ann@acme\.test approved Review flagged expenses, with no comment/)
    const text = (await review.textContent()) ?? ""
    expect(text).toContain("Checked rows12")
    expect(text).toContain("Gross: 1,240.5; Currency: USD")
    expect(text).not.toMatch(/[{}"]/)
    expect(await page.locator("pre").count()).toBe(0)
    await expectFit("what was decided at 390 px")
    expect(errors).toEqual([])
  })

  it("marks a flagged row resolved (recorded in the timeline) and the approve warning counts what was done (1280 px)", async () => {
    await open(`#/tasks/${REVIEW_TASK}`, 1280)
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor()
    // ann edits row 2 without resolving it, then marks row 1 resolved.
    const flight = page.locator(`tr[data-row-id="${ROW.flight}"]`)
    await flight.getByRole("gridcell", { name: "Delta Air Lines" }).click()
    await page.getByLabel("Merchant, row 2").fill("Delta")
    await page.keyboard.press("Enter")
    await expect.poll(() => flight.textContent()).toContain("Delta")
    await page.getByRole("button", { name: "Resolve row 1" }).click()
    const coffee = page.locator(`tr[data-row-id="${ROW.coffee}"]`)
    await expect.poll(() => coffee.getAttribute("data-status")).toBe("RESOLVED")
    expect(await coffee.getByRole("button").count()).toBe(0)
    const events = await api("GET", `/v1/tasks/${REVIEW_TASK}/events`)
    expect(events.body.events.find((e: any) => e.type === "row.resolved")?.payload).toMatchObject({
      rowId: ROW.coffee,
      previousStatus: "NEEDS_ATTENTION",
      newStatus: "RESOLVED",
      actor: "ann@acme.test",
      stepId: "review"
    })
    await expect.poll(() => page.locator(".feed").textContent()).toMatch(/ann@acme\.test marked row 1 \(Blue Bottle\) resolved/)
    await expect.poll(() => page.getByTestId("review-counts").textContent()).toBe(
      "1 row marked resolved, 1 row rejected; 2 flagged rows still open (1 of them edited, not marked resolved)."
    )
    await expectFit("review with a resolved row")
    // On a phone the actions cell holds Resolve and Reject, both in view and 44 px tall.
    await page.setViewportSize({ width: 390, height: 900 })
    for (const b of await page.getByRole("grid").getByRole("button", { name: /^(Resolve|Reject) row/ }).all()) {
      const box = (await b.boundingBox())!
      expect(box.x + box.width).toBeLessThanOrEqual(390)
      expect(box.height).toBeGreaterThanOrEqual(44)
    }
    await expectFit("review with a resolved row at 390 px")
    await page.setViewportSize({ width: 1280, height: 900 })

    await page.getByRole("button", { name: "Approve", exact: true }).click()
    const dialog = page.getByRole("dialog")
    await expect.poll(() => dialog.textContent()).toMatch(/2 flagged rows are still open.*1 row marked resolved/)
    await dialog.getByRole("button", { name: "Cancel" }).click()

    // The specification's actions keep their meaning; resolve_flag only from NEEDS_ATTENTION.
    const again = await api("POST", `/v1/tasks/${REVIEW_TASK}/row-action`, { ledger: "expenses", action: "resolve_flag", rowId: ROW.coffee })
    expect(again.status).toBe(400)
    expect(again.body).toMatchObject({ currentStatus: "RESOLVED" })
    const rejected = await api("POST", `/v1/tasks/${REVIEW_TASK}/row-action`, { ledger: "expenses", action: "resolve_flag", rowId: ROW.parking })
    expect(rejected.status).toBe(400)
    expect(rejected.body).toMatchObject({ currentStatus: "REJECTED" })
    const edit = await api("POST", `/v1/tasks/${REVIEW_TASK}/row-action`, { ledger: "expenses", action: "edit_cell", rowId: ROW.coffee, field: "merchant", value: "x" })
    expect(edit.status).toBe(400)
    expect(errors).toEqual([])
  })

  it("the start form warns of a task of that workflow for that period before anything is sent (390 px)", async () => {
    await open(`#/entities/${ACME_US}/start`, 390)
    await page.getByLabel("Period (required)").waitFor()
    let posts = 0
    page.on("request", (r) => void (r.method() === "POST" && posts++))
    await page.getByLabel("Period (required)").fill("2026-10")
    const warning = page.getByTestId("same-period")
    await expect.poll(() => warning.textContent()).toMatch(/already has a task of Close for 2026-10.*Close 2026-10/)
    await expectFit("start form with the warning at 390 px")
    await page.getByLabel("Period (required)").fill("2026-1")
    expect(await warning.count()).toBe(0)
    await page.getByLabel("Period (required)").fill("2026-12")
    expect(await warning.count()).toBe(0)
    expect(posts).toBe(0)
  })

  it("My groups keeps the steps of the caller's groups, as GET /v1/me names them (1280 px)", async () => {
    const me = await api("GET", "/v1/me")
    const tenant = { id: expect.any(String), slug: "acme", name: expect.any(String) }
    expect(me.body).toEqual({ actor: "ann@acme.test", groups: ["controllers"], identity: "edge", tenant })
    expect((await api("GET", "/v1/me", undefined, {})).body).toEqual({ actor: null, groups: [], identity: "edge", tenant })

    await open("", 1280)
    await page.getByRole("heading", { name: "Inbox" }).waitFor()
    await page.getByRole("button", { name: "Mine" }).click()
    const list = page.getByRole("list", { name: "Waiting steps" })
    await expect.poll(() => list.textContent()).toContain("Named or auditors")
    await page.getByRole("button", { name: "My groups" }).click()
    await expect.poll(() => page.getByTestId("my-groups").textContent()).toBe("Your groups, as the gateway's edge names them: controllers.")
    // "group:Controllers" is ann's group (compared as the gateway compares them); "ann or the auditors" is hers by name only.
    await expect.poll(() => list.textContent()).toContain("Controllers only")
    expect(await list.textContent()).not.toContain("Named or auditors")
    expect(await list.textContent()).not.toContain("Another named")
    await expectFit("inbox, my groups")
    expect(errors).toEqual([])
  })
})
