/**
 * Claims in webhooks (README "Outbound webhooks"): `step.claimed` and `step.released` are events
 * the gateway writes to a timeline, so a subscription naming no types gets them; one that names
 * types must be able to name them too (they were sent to the first and refused as "unknown event
 * type" to the second). On the built process with a real receiver and an identity at the edge.
 */
import { fileURLToPath } from "node:url"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { type Receiver, startReceiver } from "./receiver.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/inbox.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = "claim-events-admin-token-0123456789"

let receiver: Receiver
let gw: BuiltGateway

beforeAll(async () => {
  receiver = await startReceiver()
  gw = await startBuiltGateway({
    SVC_SEED_FILE: FIXTURE,
    SVC_ACTOR_HEADER: "x-forwarded-email",
    SVC_ADMIN_TOKEN: TOKEN,
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`
  })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
  await receiver?.close()
})

const subscribe = async (path: string, events?: ReadonlyArray<string>) => {
  const res = await http("POST", `${gw.adminUrl}/workspace/webhooks`, {
    tenant: "acme",
    url: receiver.url(path),
    ...(events !== undefined ? { events } : {})
  }, { authorization: `Bearer ${TOKEN}` })
  expect(res.status, res.text).toBe(201)
  return res.body as { id: string; secret: string }
}

it("a subscription may name step.claimed and step.released, and gets exactly them", async () => {
  const named = await subscribe("/claims", ["step.claimed", "step.released"])
  await subscribe("/all")
  const as = { "x-forwarded-email": "ann@acme.test" }
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "close" }, as)
  expect(created.status, created.text).toBe(201)
  const taskId = created.body.id as string
  expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/claim`, {}, as)).status).toBe(200)
  expect((await http("DELETE", `${gw.url}/v1/tasks/${taskId}/claim`, undefined, as)).status).toBe(204)

  const got = await receiver.waitFor("/claims", 2)
  const events = got.map((r) =>
    new Webhook(named.secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> }
  )
  expect(events.map((e) => e.type)).toEqual(["step.claimed", "step.released"])
  expect(events[0]!.data).toMatchObject({ taskId, stepId: "prepare", holder: "ann@acme.test", actor: "ann@acme.test" })
  // The subscription naming no types gets them too, among the task's other events.
  const all = await receiver.waitFor("/all", 1, 15_000, (r) => JSON.parse(r.body).type === "step.released")
  expect(JSON.parse(all[0]!.body).data.taskId).toBe(taskId)
})
