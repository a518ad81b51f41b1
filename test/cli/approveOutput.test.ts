/**
 * `svc task approve` / `reject` say which step they decided: the decision is bound to the step
 * the tool read, and the line names it by title and id, with the task's title.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Gateway, startGateway, stopAllProcesses, svc as runSvc } from "./harness.js"

const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70" // expense-review, at review_expenses
const SIGNOFF_TASK = "4c6e8a02-3d5f-4b7c-9e1a-2f4b6d8f0c53" // expense-review (UK), at sign_off

let gw: Gateway
const svc = (...args: Array<string>) => runSvc(args, { cwd: gw.dir, env: { SVC_URL: gw.url } })

beforeAll(async () => {
  gw = await startGateway()
}, 40_000)

afterAll(async () => {
  await gw?.stop()
  stopAllProcesses()
})

describe("svc task approve / reject", () => {
  it("names the step it decided, one step after the other", async () => {
    const first = await svc("task", "approve", REVIEW_TASK, "-m", "Checked")
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toBe(
      `Approved the current step of task ${REVIEW_TASK}: step "Review flagged expenses" (review_expenses) of "Expense review 2026-10" (tenant acme)\n`
    )
    const ui = await fetch(`${gw.url}/v1/tasks/${REVIEW_TASK}/ui`).then((r) => r.json()) as { step: { id: string; title: string } }
    const second = await svc("task", "reject", REVIEW_TASK)
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toBe(
      `Rejected the current step of task ${REVIEW_TASK}: step "${ui.step.title}" (${ui.step.id}) of "Expense review 2026-10" (tenant acme)\n`
    )
    // The task is FAILED now: nothing to decide, said as the gateway says it.
    const third = await svc("task", "approve", REVIEW_TASK)
    expect(third.code).toBe(1)
    expect(third.stderr).toContain("Task is FAILED with no step to decide")
  }, 60_000)

  it("--json prints the gateway's answer as it is", async () => {
    const run = await svc("task", "approve", SIGNOFF_TASK, "--json")
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({ ok: true })
  }, 60_000)
})
