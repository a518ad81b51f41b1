/**
 * Row actions written together (the built process, `npm start`'s dist/main.js): a row action is
 * checked when it is recorded and applied when its signal is delivered, so a second one checked
 * against the row as stored passed the same `expected` (or an edit passed beside a reject of the
 * row), answered 200, and was dropped on delivery. Before the fix: 10 edits with one `expected`
 * answered 2-5 x 200 and kept one; a reject and an edit both answered 200 and the edit was gone.
 * Now each is checked against the row as the row actions still to be applied will leave it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleFixture } from "../support/gateway.js"
import { http } from "../support/process.js"
import { type RawResponse, sendTogether } from "../support/together.js"
import { EXPENSE_TASK } from "../support/world.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

let gateway: BuiltGateway

beforeAll(async () => {
  gateway = await startBuiltGateway({}, exampleFixture)
}, 60_000)

afterAll(async () => {
  await gateway?.cleanup()
})

interface Row {
  readonly id: string
  readonly status: string
  readonly fields: Record<string, unknown>
}

const rows = async (): Promise<Array<Row>> => (await http("GET", `${gateway.url}/v1/tasks/${EXPENSE_TASK}/ui`)).body.step.args.rows

const rowEvents = async (rowId: string) =>
  ((await http("GET", `${gateway.url}/v1/tasks/${EXPENSE_TASK}/events?limit=1000`)).body.events as Array<{ type: string; payload: Record<string, unknown> }>)
    .filter((e) => e.payload.rowId === rowId)

const rowAction = (body: Record<string, unknown>) => ({ method: "POST", path: `/v1/tasks/${EXPENSE_TASK}/row-action`, body: { ledger: "expenses", ...body } })

const summary = (answers: ReadonlyArray<RawResponse>) => answers.map((a) => `${a.status} ${a.text}`).join("\n")

describe("row actions written together (built process)", () => {
  it("10 edits of one cell with the same expected value: one 200, nine 409, the cell holds the one acknowledged (5 rounds)", async () => {
    const row = (await rows()).find((r) => r.status !== "REJECTED" && typeof r.fields.amount_gross === "number")!
    for (let round = 0; round < 5; round++) {
      const current = (await rows()).find((r) => r.id === row.id)!.fields.amount_gross as number
      const values = Array.from({ length: 10 }, (_, i) => current + 1 + i + round * 100)
      const answers = await sendTogether(
        gateway.url,
        values.map((value) => rowAction({ action: "edit_cell", rowId: row.id, field: "amount_gross", value, expected: current })),
        {},
        round % 2 === 0
      )
      const ok = answers.flatMap((a, i) => (a.status === 200 ? [values[i]!] : []))
      expect(ok.length, `round ${round}:\n${summary(answers)}`).toBe(1)
      expect(answers.filter((a) => a.status === 409).length, summary(answers)).toBe(9)
      await expect.poll(async () => (await rows()).find((r) => r.id === row.id)!.fields.amount_gross).toBe(ok[0])
      const edited = (await rowEvents(row.id)).filter((e) => e.type === "row.edited" && e.payload.oldValue === current)
      expect(edited.map((e) => e.payload.newValue), `round ${round}`).toEqual([ok[0]])
    }
  }, 60_000)

  it("a row action and a direct edit of one cell together: every 200 is in the timeline, the cell holds the last (8 rounds)", async () => {
    const row = (await rows()).find((r) => r.status !== "REJECTED" && typeof r.fields.amount_gross === "number")!
    for (let round = 0; round < 8; round++) {
      const current = (await rows()).find((r) => r.id === row.id)!.fields.amount_gross as number
      const before = (await rowEvents(row.id)).length
      const viaAction = current + 1
      const direct = current + 2
      const [action, patch] = await sendTogether(gateway.url, [
        rowAction({ action: "edit_cell", rowId: row.id, field: "amount_gross", value: viaAction, expected: current }),
        { method: "PATCH", path: `/v1/subledgers/expenses/${row.id}`, body: { field: "amount_gross", value: direct } }
      ], {}, round % 2 === 0)
      const answers = summary([action!, patch!])
      // Each is applied or refused whole: the direct edit first makes the row action's `expected`
      // stale (409); the row action first makes the direct edit wait for it (409), or not, once applied.
      expect([200, 409], answers).toContain(action!.status)
      expect([200, 409], answers).toContain(patch!.status)
      expect(action!.status === 200 || patch!.status === 200, answers).toBe(true)
      // Every acknowledged edit is on the timeline, in the order it was applied; the cell holds the last.
      const acknowledged = [...(action!.status === 200 ? [viaAction] : []), ...(patch!.status === 200 ? [direct] : [])]
      await expect.poll(async () => (await rowEvents(row.id)).length - before).toBe(acknowledged.length)
      const applied = (await rowEvents(row.id)).slice(before).map((e) => e.payload.newValue)
      expect([...applied].sort(), answers).toEqual([...acknowledged].sort())
      expect((await rows()).find((r) => r.id === row.id)!.fields.amount_gross).toBe(applied.at(-1))
      if (patch!.status === 409) expect(patch!.body.message, answers).toMatch(/still being applied; send the change again/)
    }
  }, 60_000)

  it("a direct edit right after a row action's 200, answered at its commit (SVC_SIGNAL_AWAIT_MS=0): both in the timeline, or the edit a 409 (10 rounds)", async () => {
    // The row action is applied by the relay after its answer: a direct edit written meanwhile
    // changed the cell under it, and its delivery then dropped it ("changed since the editor saw it").
    const quick = await startBuiltGateway({ SVC_SIGNAL_AWAIT_MS: "0" }, exampleFixture)
    try {
      const rowsOf = async (): Promise<Array<Row>> => (await http("GET", `${quick.url}/v1/tasks/${EXPENSE_TASK}/ui`)).body.step.args.rows
      const eventsOf = async (rowId: string) =>
        ((await http("GET", `${quick.url}/v1/tasks/${EXPENSE_TASK}/events?limit=1000`)).body.events as Array<{ type: string; payload: Record<string, unknown> }>)
          .filter((e) => e.type === "row.edited" && e.payload.rowId === rowId)
      const row = (await rowsOf()).find((r) => r.status !== "REJECTED" && typeof r.fields.amount_gross === "number")!
      for (let round = 0; round < 10; round++) {
        const current = (await rowsOf()).find((r) => r.id === row.id)!.fields.amount_gross as number
        const before = (await eventsOf(row.id)).length
        const action = await http("POST", `${quick.url}/v1/tasks/${EXPENSE_TASK}/row-action`, {
          ledger: "expenses", action: "edit_cell", rowId: row.id, field: "amount_gross", value: current + 1, expected: current
        })
        const patch = await http("PATCH", `${quick.url}/v1/subledgers/expenses/${row.id}`, { field: "amount_gross", value: current + 2 })
        const answers = `${action.status} ${action.text}\n${patch.status} ${patch.text}`
        expect(action.status, answers).toBe(200)
        expect([200, 409], answers).toContain(patch.status)
        const acknowledged = patch.status === 200 ? [current + 1, current + 2] : [current + 1]
        await expect.poll(async () => (await eventsOf(row.id)).slice(before).map((e) => e.payload.newValue), { message: answers }).toEqual(acknowledged)
        if (patch.status === 409) {
          expect(patch.body.message).toMatch(/still being applied; send the change again/)
          await expect.poll(async () => (await http("PATCH", `${quick.url}/v1/subledgers/expenses/${row.id}`, { field: "amount_gross", value: current + 2 })).status).toBe(200)
        }
      }
    } finally {
      await quick.cleanup()
    }
  }, 60_000)

  it("a reject and an edit of one row together: every 200 holds (the edit refused once the reject is recorded)", async () => {
    const candidates = (await rows()).filter((r) => r.status === "NEEDS_ATTENTION")
    expect(candidates.length).toBeGreaterThan(0)
    const row = candidates[0]!
    const before = (await rowEvents(row.id)).length
    const merchant = "Edited at once 编辑"
    const [reject, edit] = await sendTogether(gateway.url, [
      rowAction({ action: "reject_row", rowId: row.id }),
      rowAction({ action: "edit_cell", rowId: row.id, field: "merchant", value: merchant })
    ], {}, true)
    expect(reject!.status, summary([reject!, edit!])).toBe(200)
    const after = async () => (await rows()).find((r) => r.id === row.id)!
    await expect.poll(async () => (await after()).status).toBe("REJECTED")
    if (edit!.status === 200) {
      // Recorded first: applied before the reject.
      expect((await after()).fields.merchant).toBe(merchant)
      expect((await rowEvents(row.id)).slice(before).map((e) => e.type)).toEqual(["row.edited", "row.rejected"])
    } else {
      expect([edit!.status, edit!.body.message]).toEqual([400, "Row in status REJECTED cannot be edited"])
      expect((await after()).fields.merchant).toBe(row.fields.merchant)
      expect((await rowEvents(row.id)).slice(before).map((e) => e.type)).toEqual(["row.rejected"])
    }
  }, 60_000)
})
