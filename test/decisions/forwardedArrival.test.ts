/**
 * The workspace API (the admin listener here; `npm run workspace` alike) takes a gateway's
 * arrival stamp (`x-svc-arrived-at`) so that a decision binds to the step its client saw. A
 * stamp later than the workspace's own receipt of the request (a gateway whose clock runs
 * ahead, a broken caller) cannot be when the request arrived: a decision waited until that
 * stamp plus the settle time, seconds for a clock seconds ahead, and never answered for 1e15.
 * Built process, SQLite.
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"

let gw: BuiltGateway

beforeAll(async () => {
  gw = await startBuiltGateway({ SVC_SEED_FILE: FIXTURE })
}, 60_000)

afterAll(async () => {
  await gw?.cleanup()
})

const approveArrivedAt = async (taskId: string, arrivedAt: string) => {
  const res = await fetch(`${gw.adminUrl}/workspace/tenants/${ACME}/signals`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-svc-arrived-at": arrivedAt },
    body: JSON.stringify({ taskId, name: "approve", payload: {} }),
    signal: AbortSignal.timeout(5_000)
  })
  return { status: res.status, text: await res.text() }
}

describe("a forwarded arrival later than the request reached the workspace (built process)", () => {
  it("counts as the workspace's own receipt: the decision answers at once and decides the current step", async () => {
    for (const arrivedAt of [String(Date.now() + 60_000), "1e15"]) {
      const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
      expect(created.status).toBe(201)
      const taskId = created.body.id as string
      expect(await approveArrivedAt(taskId, arrivedAt), arrivedAt).toEqual({ status: 204, text: "" })
      expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step.id, arrivedAt).toBe("cfo_approval")
    }
  }, 30_000)
})
