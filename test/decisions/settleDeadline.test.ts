/**
 * A decision waits its settle time (SVC_DECISION_SETTLE_MS) after its arrival before it may
 * move a task; the gateway answers within SVC_REQUEST_DEADLINE_MS. With the embedded store and a
 * settle time past the deadline, the decision answered 200 a second and a half after a 100 ms
 * deadline. Now the wait ends at the deadline: 504 and nothing recorded, as with an HTTP
 * workspace. Built process, SQLite.
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { remittanceFile } from "./remittance.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_SEED_FILE: FIXTURE, SVC_REQUEST_DEADLINE_MS: "200", SVC_DECISION_SETTLE_MS: "700" })
}, 60_000)

afterAll(async () => {
  await gw?.cleanup()
})

describe("a settle time longer than the request's deadline (built process, embedded store)", () => {
  it("answers 504 at the deadline, naming both, and records nothing: the task stays at its step", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
    expect(created.status).toBe(201)
    const taskId = created.body.id as string
    const started = performance.now()
    const answer = await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" })
    const took = performance.now() - started
    expect(answer.status, answer.text).toBe(504)
    expect(answer.body).toEqual({
      statusCode: 504,
      error: "Gateway Timeout",
      message: "A write bound to a step waits 700 ms after its arrival (SVC_DECISION_SETTLE_MS), past the request's deadline of 200 ms: nothing was recorded"
    })
    expect(took).toBeLessThan(650)
    // Past the settle time: still nothing decided (the signal was never recorded).
    await new Promise((resolve) => setTimeout(resolve, 800 - took))
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step.id).toBe("controller_approval")
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)).body).toEqual({})
    expect(gw.output()).not.toMatch(/"status":500/)
  }, 30_000)

  it("a file naming a step too: 504, no file kept, the step not completed", async () => {
    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
    const taskId = created.body.id as string
    const answer = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, remittanceFile(taskId))
    expect(answer.status, answer.text).toBe(504)
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)).body).toEqual([])
  }, 30_000)
})
