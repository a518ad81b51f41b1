/**
 * No silent overwrite, on the built process: edit_cell (the row action and PATCH) takes the value
 * the editor saw (`expected`); a cell changed since answers 409 with its current value and who
 * changed it, and nothing is written.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

/** Demo data: a task at review_expenses (TABLE_REVIEW) and its NEEDS_ATTENTION rows. */
const EXPENSE_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const ROW = "0349944d-fb03-40cf-a73a-21b10c2a61e9"

let dir: string
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "inbox-expected-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "w.db")}`, SVC_ACTOR_HEADER: "x-forwarded-email" })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const as = (actor: string) => ({ "x-forwarded-email": actor })
const cell = async () =>
  (await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/ui`)).body.step.args.rows.find((r: any) => r.id === ROW).fields.amount_gross

describe("edit_cell with expected", () => {
  it("two reviewers on one cell: the later save, made on the old value, is a 409 naming the current value and its editor", async () => {
    const seen = await cell()
    const first = await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/row-action`, {
      ledger: "expenses", action: "edit_cell", rowId: ROW, field: "amount_gross", value: 111, expected: seen
    }, as("ann@acme.test"))
    expect(first.status).toBe(200)
    const second = await http("POST", `${gw.url}/v1/tasks/${EXPENSE_TASK}/row-action`, {
      ledger: "expenses", action: "edit_cell", rowId: ROW, field: "amount_gross", value: 222, expected: seen
    }, as("bob@acme.test"))
    expect(second.status).toBe(409)
    expect(second.body).toMatchObject({ statusCode: 409, error: "Conflict", currentValue: 111, changedBy: "ann@acme.test" })
    expect(await cell()).toBe(111)
    const direct = await http("PATCH", `${gw.url}/v1/subledgers/expenses/${ROW}`, { field: "amount_gross", value: 333, expected: seen }, as("bob@acme.test"))
    expect(direct.status).toBe(409)
    expect(direct.body).toMatchObject({ currentValue: 111, changedBy: "ann@acme.test" })
    expect(await cell()).toBe(111)
    const edits = ((await http("GET", `${gw.url}/v1/tasks/${EXPENSE_TASK}/events`)).body.events as Array<any>).filter((e) => e.type === "row.edited")
    expect(edits).toHaveLength(1)
    // On the value they see now, and without expected (as before), edits go through.
    expect((await http("PATCH", `${gw.url}/v1/subledgers/expenses/${ROW}`, { field: "amount_gross", value: 333, expected: 111 }, as("bob@acme.test"))).status).toBe(200)
    expect((await http("PATCH", `${gw.url}/v1/subledgers/expenses/${ROW}`, { field: "amount_gross", value: 444 }, as("bob@acme.test"))).status).toBe(200)
    expect(await cell()).toBe(444)
  })
})
