/**
 * `svc webhooks resend` of a message still retrying (README "Outbound webhooks"): a receiver that
 * failed and was then fixed gets it at once, not when the backoff (minutes to hours) runs out;
 * before, the resend answered 200 and sent nothing, and the task's later events waited behind it.
 * On the built process with a real receiver, verified with the reference library.
 */
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { type Receiver, startReceiver } from "./receiver.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = "resend-retrying-admin-token-0123456789"

let receiver: Receiver
let gw: BuiltGateway

beforeAll(async () => {
  receiver = await startReceiver()
  gw = await startBuiltGateway({
    SVC_ADMIN_TOKEN: TOKEN,
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`,
    // After the first failure the next attempt is an hour away.
    SVC_WEBHOOK_RETRY_SCHEDULE: "0,1h"
  })
}, 60_000)
afterAll(async () => {
  await gw?.cleanup()
  await receiver?.close()
})

const admin = (method: string, path: string, body?: unknown) =>
  http(method, `${gw.adminUrl}/workspace${path}`, body, { authorization: `Bearer ${TOKEN}` })

it("resending a message that waits for its next retry sends it now, and the task's next events after it", async () => {
  const sub = await admin("POST", "/webhooks", { tenant: "acme", url: receiver.url("/fixed"), events: ["task.created", "task.waiting"] })
  expect(sub.status, sub.text).toBe(201)
  receiver.answer("/fixed", (n) => ({ status: n === 0 ? 500 : 204 }))
  const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(created.status, created.text).toBe(201)
  const [failed] = await receiver.waitFor("/fixed", 1)
  const deliveryId = String(failed!.headers["webhook-id"])
  const log = await admin("GET", `/webhooks/${sub.body.id}/deliveries?tenant=acme&limit=5`)
  expect(log.body[0]).toMatchObject({ deliveryId, outcome: "retrying" })

  const resent = await admin("POST", `/webhooks/deliveries/${deliveryId}/resend?tenant=acme`)
  expect(resent.status, resent.text).toBe(202)
  expect(resent.body).toMatchObject({ deliveryId, state: "pending" })
  // Before the fix: nothing for an hour (the wait gives up after 10 s).
  const got = await receiver.waitFor("/fixed", 3, 10_000)
  expect(got.map((r) => String(r.headers["webhook-id"])).slice(0, 2)).toEqual([deliveryId, deliveryId])
  const events = got.map((r) => new Webhook(sub.body.secret).verify(r.body, r.headers as Record<string, string>) as { type: string })
  expect(events.map((e) => e.type)).toEqual(["task.created", "task.created", "task.waiting"])
}, 30_000)
