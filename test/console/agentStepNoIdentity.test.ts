/**
 * An agent's step in the console without an identity at the edge: nobody is named, so the
 * take-over cannot be claimed (the gateway refuses a claim by nobody); the controls then open with
 * that said plainly, and the decision goes through as the API allows without an identity.
 */
import { fileURLToPath } from "node:url"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService } from "../support/process.js"
import { type ConsoleUnderTest, seriousViolations, startConsole } from "./browser.js"

const FIXTURE = fileURLToPath(new URL("./details.fixture.json", import.meta.url))
const AGENT_TASK = "11111111-1111-4111-8111-111111111111"

let run: ConsoleUnderTest | undefined
let gw: RunningService
let page: Page
let errors: Array<string>

beforeAll(async () => {
  run = await startConsole({ SVC_SEED_FILE: FIXTURE })
  ;({ gw, page, errors } = run)
}, 90_000)
afterAll(() => run?.close())

describe("an agent's step without an identity at the edge", { timeout: 60_000 }, () => {
  it("says whose it is; Take over opens the controls with a warning that it cannot be recorded (1280 px)", async () => {
    expect((await http("GET", `${gw!.url}/v1/me`)).body).toEqual({
      actor: null, groups: [], identity: "none", tenant: { id: expect.any(String), slug: "acme", name: expect.any(String) }
    })
    await page.goto(`${gw!.url}/#/tasks/${AGENT_TASK}`)
    const owner = page.getByTestId("step-owner")
    await expect.poll(() => owner.textContent()).toMatch(/This is the agent 5f0c8e7a's step/)
    expect(await page.getByRole("button", { name: "Approve", exact: true }).count()).toBe(0)
    await page.getByRole("button", { name: "Take over from the agent" }).click()
    await expect.poll(() => owner.textContent()).toMatch(/Nobody is named at the gateway's edge, so the take-over cannot be recorded/)
    expect(await seriousViolations(page)).toEqual([])
    await page.getByRole("button", { name: "Approve", exact: true }).click()
    await page.getByRole("heading", { name: "Current step: Review flagged expenses" }).waitFor()
    expect(errors).toEqual([])
  })

  it("the inbox's Mine view says nobody is named, without asking for assignee=me (a 400 when nobody is); All lists the work", async () => {
    const inboxQueries: Array<string> = []
    page.on("request", (r) => {
      if (r.url().includes("/v1/inbox")) inboxQueries.push(new URL(r.url()).search)
    })
    await page.goto("about:blank")
    await page.evaluate(() => sessionStorage.clear()).catch(() => undefined)
    await page.goto(`${gw!.url}/`)
    await page.getByRole("heading", { name: "Inbox" }).waitFor()
    await page.getByText("Without an identity at the gateway's edge nobody is named, so only All lists the work.").waitFor()
    expect(await page.getByRole("alert").count()).toBe(0)
    await page.getByRole("button", { name: "All" }).click()
    await page.getByRole("list", { name: "Waiting steps" }).waitFor()
    expect(inboxQueries.filter((q) => q.includes("assignee=me"))).toEqual([])
    expect(errors).toEqual([])
  })
})
