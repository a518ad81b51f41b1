/** `svc task ui` prints a table step's rows, against the real gateway. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway, stopAllProcesses, svc } from "../cli/harness.js"

const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70" // at review_expenses (TABLE_REVIEW, ledger expenses)

let gw: Gateway
beforeAll(async () => {
  gw = await startGateway()
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  stopAllProcesses()
})

describe("svc task ui", () => {
  it("prints the table step's rows: id, status, the fields (editable ones marked), and how to act on them", async () => {
    const run = await svc(["task", "ui", REVIEW_TASK], { env: { SVC_URL: gw.url } })
    expect(run.code, run.stderr).toBe(0)
    const out = run.stdout
    expect(out).toContain("Rows (6; * = editable now)")
    const lines = out.split("\n")
    const header = lines.find((l) => l.startsWith("ROW "))!
    expect(header).toMatch(/^ROW\s+STATUS\s+AMOUNT_GROSS\s+.*MERCHANT/)
    // A row under review: its editable fields carry the mark; a rejected one has none.
    const blueBottle = lines.find((l) => l.startsWith("0349944d-fb03-40cf-a73a-21b10c2a61e9"))!
    expect(blueBottle).toMatch(/NEEDS_ATTENTION\s+.*Blue Bottle\*/)
    const parking = lines.find((l) => l.startsWith("eff2b18c-a2fe-42cb-8fdb-bf71a794b101"))!
    expect(parking).toMatch(/REJECTED\s+.*Parking(?!\*)/)
    expect(parking).not.toContain("*")
    // Not the task's journal proposal, not another task's row.
    expect(out).not.toContain("cf4b6d8a-1a3c-4e5f-9b7d-0c2e4a6c8edb")
    expect(out).not.toContain("Pret A Manger")
    expect(out).toContain(`svc task row-action ${REVIEW_TASK} edit_cell <ROW>`)
    // The rows are not repeated as raw args.
    expect(out).not.toMatch(/^Args .*rows/m)
  }, 60_000)
})
