/** The end-to-end suite on real processes, run on each store (lifecycle.test.ts, lifecycle.pg.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { http, type RunningService, startService } from "../support/process.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const GLOBEX_US = "40b0f59f-adbf-4d1b-ba2a-434dde6e06ec"

/**
 * The end-to-end suite on one store: `database(dir)` gives the SVC_DATABASE_URL the processes
 * share (a file in the suite's temp directory, or a PostgreSQL database).
 */
export const runLifecycleSuite = (store: string, database: (dir: string) => Promise<string> | string) => {
let dir: string
let db: string
const running: Array<RunningService> = []
const start = async (env: Record<string, string>) => {
  const service = await startService({ SVC_DATABASE_URL: db, SVC_SEED_FILE: FIXTURE, ...env })
  running.push(service)
  return service
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateway-e2e-"))
  db = await database(dir)
})
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  rmSync(dir, { recursive: true, force: true })
})

// Real processes start slower on a loaded machine; the waits are bounded by startService itself.
describe(`the real process, over HTTP (${store})`, { timeout: 120_000 }, () => {
  it("drives a task from the entity list to COMPLETED, and a restart keeps the data", async () => {
    let gw = await start({ SVC_TENANT_SLUG: "acme" })
    expect(gw.output()).toContain("tenant gateway listening on")
    // The multi-tenant workspace API is on the admin listener only, never on the gateway's port.
    expect(gw.output()).toContain(`admin:     ${gw.adminUrl}/workspace`)
    expect((await http("GET", `${gw.url}/workspace/tenants/by-slug/globex`)).status).toBe(404)
    expect((await http("GET", `${gw.adminUrl}/workspace/tenants/by-slug/globex`)).status).toBe(200)
    const entities = await http("GET", `${gw.url}/v1/entities`)
    expect(entities.body.map((e: any) => e.id)).toContain(ACME_US)

    const created = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, {
      workflowId: "expense-review",
      context: { period: "2026-11" }
    })
    expect(created.status).toBe(201)
    const taskId = created.body.id

    let ui = await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)
    expect(ui.body.step.displayHint.component).toBe("FILE_UPLOAD")
    const submit = ui.body.step.args.actions.find((a: any) => a.type === "submit_file")
    expect(submit.path).toBe(`/v1/tasks/${taskId}/files/ingest`)

    const upload = await http("POST", `${gw.url}${submit.path}`, {
      source: submit.source,
      fileName: "receipt.pdf",
      fileRef: { provider: "inline_base64", data: Buffer.from("Coffee 4.50").toString("base64") },
      signalTaskId: submit.signalTaskId,
      signalName: submit.signalName
    })
    expect(upload.status).toBe(201)
    ui = await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)
    expect(ui.body.step.id).toBe("review_expenses")
    expect(ui.body.steps[0]).toEqual({ id: "upload_receipts", title: "Upload receipts", status: "COMPLETED" })

    expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved", comments: "fine" })).body).toEqual({ ok: true })
    expect((await http("POST", `${gw.url}/v1/tasks/${taskId}/action`, { type: "approved" })).status).toBe(200)
    ui = await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)
    expect(ui.body.task.status).toBe("COMPLETED")
    const snapshots = await http("GET", `${gw.url}/v1/tasks/${taskId}/snapshots`)
    expect(snapshots.body.review_expenses).toMatchObject({ decision: "approved", reason: "fine" })

    const dl = await fetch(`${gw.url}${upload.body.downloadUrl}`)
    expect(await dl.text()).toBe("Coffee 4.50")

    // Restart on the same database: the task and its file are still there.
    await gw.stop()
    gw = await start({ SVC_TENANT_SLUG: "acme" })
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.task.status).toBe("COMPLETED")
    expect((await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)).body).toHaveLength(1)
    await gw.stop()
  })

  it("two processes bound to different tenants over one database each see only their own data", async () => {
    const [acme, globex] = await Promise.all([start({ SVC_TENANT_SLUG: "acme" }), start({ SVC_TENANT_SLUG: "globex" })])
    const acmeEntities = (await http("GET", `${acme.url}/v1/entities`)).body.map((e: any) => e.id)
    const globexEntities = (await http("GET", `${globex.url}/v1/entities`)).body.map((e: any) => e.id)
    expect(acmeEntities).toContain(ACME_US)
    expect(acmeEntities).not.toContain(GLOBEX_US)
    expect(globexEntities).toEqual([GLOBEX_US])
    expect((await http("GET", `${acme.url}/v1/entities/${GLOBEX_US}/tasks`)).status).toBe(404)
    expect((await http("GET", `${globex.url}/v1/entities/${ACME_US}/tasks`)).status).toBe(404)
    // A task one creates is invisible to the other.
    const created = await http("POST", `${globex.url}/v1/entities/${GLOBEX_US}/tasks`, { workflowId: "payroll-check", context: { period: "2026-11" } })
    expect(created.status).toBe(201)
    expect((await http("GET", `${globex.url}/v1/tasks/${created.body.id}/ui`)).status).toBe(200)
    expect((await http("GET", `${acme.url}/v1/tasks/${created.body.id}/ui`)).status).toBe(404)
    expect((await http("GET", `${acme.url}/v1/gl/status`)).body.connected).toBe(true)
    expect((await http("GET", `${globex.url}/v1/gl/status`)).body).toEqual({ connected: false, tenantId: expect.any(String) })
  })

  it("with SVC_TENANT_SLUG unset the embedded mode binds the demo tenant and says so", async () => {
    const gw = await start({ SVC_TENANT_SLUG: "" })
    expect(gw.output()).toMatch(/tenant: +acme \(the demo tenant/)
    expect((await http("GET", `${gw.url}/v1/health`)).body).toEqual({ status: "ok" })
  })

  it("a bad fixture stops the process with a message naming the file and the JSON path", async () => {
    const bad = join(dir, "bad.json")
    const { writeFileSync } = await import("node:fs")
    writeFileSync(bad, JSON.stringify({ tenants: [{ id: "nope", slug: "x", name: "X" }] }))
    await expect(start({ SVC_SEED_FILE: bad, SVC_DATABASE_URL: `file:${join(dir, "bad.db")}` })).rejects.toThrow(
      /bad\.json[\s\S]*\$\.tenants\[0\]\.id/
    )
  })
})
}
