/**
 * `svc webhooks ...` against the built gateway's admin listener, with a real receiver: add (the
 * secret once, and why task.waiting has no console URL without SVC_PUBLIC_URL), list, deliveries,
 * resend (the same webhook-id again), disable/enable, rotate-secret, remove, and usage errors.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { Webhook } from "standardwebhooks"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { stopAllProcesses, svc } from "../cli/harness.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { type Receiver, startReceiver, until } from "./receiver.js"

const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const TOKEN = "webhook-cli-admin-token-0123456789"

let receiver: Receiver
let gw: RunningService
let dir: string

const run = (...args: Array<string>) =>
  svc(["webhooks", ...args], { env: { SVC_ADMIN_URL: gw.adminUrl, SVC_ADMIN_TOKEN: TOKEN } })

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-cli-"))
  receiver = await startReceiver()
  gw = await startBuilt({
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
    SVC_ADMIN_TOKEN: TOKEN,
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${receiver.port}`
  })
})

afterAll(async () => {
  stopAllProcesses()
  await gw?.stop()
  await receiver?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("svc webhooks", () => {
  it("add, list, deliveries, resend, disable, enable, rotate-secret, remove", async () => {
    const added = await run("add", receiver.url("/cli"), "--tenant", "acme", "--events", "task.created,task.waiting", "--json")
    expect(added.code, added.stderr).toBe(0)
    const sub = JSON.parse(added.stdout) as { id: string; secret: string; consoleUrlBase: string | null }
    expect(sub.secret).toMatch(/^whsec_/)
    expect(sub.consoleUrlBase).toBeNull()
    expect(added.stderr).toMatch(/shown only this once/)
    expect(added.stderr).toMatch(/task\.waiting events will carry no consoleUrl: the gateway's SVC_PUBLIC_URL is not set/)

    const listed = await run("list", "--tenant", "acme")
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(sub.id)
    expect(listed.stdout).not.toContain("whsec_")

    const task = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
    expect(task.status).toBe(201)
    // task.created, then task.waiting (the first step became current): both types subscribed to.
    const [first, waiting] = await receiver.waitFor("/cli", 2)
    const typeOf = (r: typeof first) => (new Webhook(sub.secret).verify(r!.body, r!.headers as Record<string, string>) as { type: string }).type
    expect(typeOf(first)).toBe("task.created")
    expect(typeOf(waiting)).toBe("task.waiting")
    const deliveryId = String(first!.headers["webhook-id"])

    await until("the attempt in the log", async () => {
      const r = await http("GET", `${gw.adminUrl}/workspace/webhooks/${sub.id}/deliveries?tenant=acme`, undefined, {
        authorization: `Bearer ${TOKEN}`
      })
      return r.body.length > 0 ? true : undefined
    })
    const log = await run("deliveries", sub.id, "--tenant", "acme")
    expect(log.stdout).toMatch(/TIME\s+DELIVERY\s+EVENT\s+RESULT\s+MS\s+OUTCOME/)
    expect(log.stdout).toMatch(/task\.created\s+204\s+\d+\s+delivered/)

    const resent = await run("resend", deliveryId, "--tenant", "acme")
    expect(resent.code, resent.stderr).toBe(0)
    const again = await receiver.waitFor("/cli", 3)
    expect(again[2]!.headers["webhook-id"]).toBe(deliveryId)
    expect(again[2]!.body).toBe(first!.body)

    const disabled = await run("disable", sub.id, "--tenant", "acme")
    expect(disabled.stdout).toMatch(/Enabled\s+no \(disabled by an operator\)/)
    const resendDisabled = await run("resend", deliveryId, "--tenant", "acme")
    expect(resendDisabled.code).toBe(1)
    expect(resendDisabled.stderr).toMatch(/disabled; enable it first/)
    const enabled = await run("enable", sub.id, "--tenant", "acme")
    expect(enabled.stdout).toMatch(/Enabled\s+yes/)

    const rotated = await run("rotate-secret", sub.id, "--tenant", "acme")
    expect(rotated.code, rotated.stderr).toBe(0)
    expect(rotated.stdout).toMatch(/New secret\s+whsec_/)

    const removed = await run("remove", sub.id, "--tenant", "acme")
    expect(removed.code, removed.stderr).toBe(0)
    const gone = await run("remove", sub.id, "--tenant", "acme")
    expect(gone.code).toBe(1)
    expect(gone.stderr).toMatch(/not found/)
  }, 240_000)

  it("refuses bad input before and at the server, naming what is wrong", async () => {
    const noTenant = await run("list")
    expect(noTenant.code).toBe(2)
    expect(noTenant.stderr).toMatch(/--tenant/)
    const badType = await run("add", "https://example.com/hook", "--tenant", "acme", "--events", "task.deleted")
    expect(badType.code).toBe(2)
    expect(badType.stderr).toMatch(/unknown event type "task\.deleted"/)
    const unknownTenant = await run("list", "--tenant", "nobody")
    expect(unknownTenant.code).toBe(1)
    expect(unknownTenant.stderr).toMatch(/unknown tenant "nobody"/)
    const notUuid = await run("remove", "abc", "--tenant", "acme")
    expect(notUuid.code).toBe(2)
    expect(notUuid.stderr).toMatch(/not a UUID/)
  }, 120_000)
})
