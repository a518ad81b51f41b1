/**
 * The `svc` CLI end to end: every command run as a child process against the real gateway
 * (started on a temporary database and ./fixture.json), checking exit codes (0 / 1 API error /
 * 2 usage error), human output, `--json` output parsed back, and a whole task driven from
 * listing to COMPLETED with the CLI alone.
 */
import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createGatewayClient, createRegistryClient, NotFound, Unauthorized } from "../../src/client/index.js"
import { eventually, type Gateway, type Run, spawnSvc, startGateway, stopAllProcesses, svc as runSvc } from "./harness.js"

const ACME = "ded92d4b-f408-46e5-8cce-284491efe71d"
const ENTITY = "8efaebe3-f600-4ec5-a77b-afb37a9b252d" // Acme US
const REVIEW_TASK = "694ebd37-72d4-4ae6-b944-eb027435cd70" // expense-review, at review_expenses
const SIGNOFF_TASK = "4c6e8a02-3d5f-4b7c-9e1a-2f4b6d8f0c53" // expense-review (UK), at sign_off: data ingest
const RECEIPT_DOC = "7eaa8264-3830-4a32-ab40-c343ff3a2de5" // receipt-001.txt of REVIEW_TASK
const UNKNOWN = "00000000-0000-4000-8000-000000000000"
const ROW = {
  reject: "0349944d-fb03-40cf-a73a-21b10c2a61e9",
  edit: "7a9c1e35-6b8d-4f0a-8c2e-5d7f9b1d3f86",
  rowReject: "8b0d2f46-7c9e-4a1b-9d3f-6e8a0c2e4a97",
  rowEdit: "9c1e3a57-8d0f-4b2c-8e4a-7f9b1d3f5ba8"
}

let gw: Gateway
let work: string

/** `svc ...args` with SVC_URL pointing at the test gateway, run in the scratch directory. */
const svc = (...args: Array<string>) => runSvc(args, { cwd: work, env: { SVC_URL: gw.url } })

const ok = (r: Run) => {
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
}
const json = (r: Run): any => JSON.parse(ok(r))
const failsWith = (r: Run, code: 1 | 2, message: string | RegExp) => {
  expect(r.code, r.stderr).toBe(code)
  expect(r.stderr).toMatch(message)
}

beforeAll(async () => {
  gw = await startGateway()
  work = path.join(gw.dir, "work")
  mkdirSync(work, { recursive: true })
  mkdirSync(gw.ingestRoot, { recursive: true })
}, 40_000)

afterAll(async () => {
  await gw?.stop()
  stopAllProcesses()
})

describe("reading: health, entities, tasks, workflows", () => {
  it("prints tables by default and JSON with --json", async () => {
    const [health, entities, tasks, workflows] = await Promise.all([
      // --url instead of SVC_URL; through the bin launcher an installed `svc` runs.
      runSvc(["health", "--url", gw.url, "--json"], { cwd: work }),
      svc("entities", "list"),
      svc("tasks", "list", ENTITY),
      svc("tasks", "workflows", "--json", ENTITY)
    ])
    expect(json(health)).toEqual({ status: "ok" })

    expect(ok(entities)).toMatch(/^ID\s+SLUG\s+NAME\n/)
    expect(ok(entities)).toMatch(/8efaebe3-f600-4ec5-a77b-afb37a9b252d\s+acme-us\s+Acme US Inc\.\n3acc7ce9/)

    expect(ok(tasks)).toMatch(/^ID\s+STATUS\s+AWAITING\s+WORKFLOW\s+CREATED\s+TITLE\n/)
    expect(ok(tasks)).toMatch(/694ebd37-72d4-4ae6-b944-eb027435cd70\s+IN_PROGRESS\s+TABLE_REVIEW\s+expense-review/)
    expect(ok(tasks)).toMatch(/265fdb4b-c9ea-44db-93d8-1c27517764ea\s+COMPLETED\s+-\s+bank-reconciliation/)

    const flows = json(workflows)
    expect(flows.map((w: any) => w.id)).toEqual(["expense-review", "bank-reconciliation", "legacy-import"])
    expect(flows[0].startParams[0]).toMatchObject({ key: "period", type: "string", required: true })
  }, 60_000)
})

describe("exit codes", () => {
  it("2 for usage errors: bad commands, flags, arguments and start params, found before anything is sent", async () => {
    const runs = await Promise.all([
      svc("nope", "--json"),
      svc("task", "ui", "not-a-task-id"),
      svc("tasks", "start", ENTITY, "expense-review", "--param", "threshold=high", "--param", "colour=red"),
      svc("files", "upload", REVIEW_TASK, path.join(work, "missing.pdf"), "--source", "receipts"),
      svc("agents", "register", "not-a-uri", "--tenant", "acme", "--name", "X")
    ])
    const [unknownCommand, badId, badParams, missingFile, badUri] = runs
    for (const r of runs) expect(r.code, r.stderr).toBe(2)
    expect(unknownCommand!.stderr).toMatch(/^svc: unknown command "nope"/)
    expect(badId!.stderr).toContain(`"not-a-task-id" is not a task id`)
    // startParams: every problem named, then what the workflow takes.
    expect(badParams!.stderr).toContain(`--param threshold: expected a number, got string "high"`)
    expect(badParams!.stderr).toContain(`unknown parameter "colour"`)
    expect(badParams!.stderr).toContain(`missing required parameter "period": pass --param period=<string>`)
    expect(badParams!.stderr).toMatch(/It takes:\n\s+--param period \(string, required, pattern .*\): Accounting period/)
    expect(missingFile!.stderr).toContain(`"${path.join(work, "missing.pdf")}" does not exist`)
    expect(badUri!.stderr).toContain("is not <kind>://<native-id>")
  }, 60_000)

  it("1 for API errors, with the API's message on stderr", async () => {
    const [notFound, unreachable] = await Promise.all([
      svc("task", "ui", UNKNOWN),
      runSvc(["entities", "list"], { cwd: work, env: { SVC_URL: "http://127.0.0.1:1" } })
    ])
    failsWith(notFound, 1, `svc: Task ${UNKNOWN} not found [404 Not Found]`)
    failsWith(unreachable, 1, /cannot reach the service \(GET http:\/\/127\.0\.0\.1:1\/v1\/entities\)/)
  }, 60_000)
})

describe("a task from listing to COMPLETED with the CLI alone", () => {
  it("starts a task, uploads the file with the submit_file signal, approves to COMPLETED", async () => {
    const created = json(
      await svc("tasks", "start", ENTITY, "expense-review", "--param", "period=2026-12", "-p", "currency=EUR", "--json")
    )
    expect(created).toMatchObject({ status: "IN_PROGRESS", workflowId: "expense-review", context: { period: "2026-12", currency: "EUR" } })
    const taskId: string = created.id

    const ui = ok(await svc("task", "ui", taskId))
    expect(ui).toContain("Current step  upload_receipts: Upload receipts (FILE_UPLOAD)")
    expect(ui).toContain(`svc files upload ${taskId} <path> --submit`)
    expect(ui).toMatch(/\[>\]\s+upload_receipts\s+Upload receipts\s+IN_PROGRESS\n\[ \]\s+review_expenses\s+Review flagged expenses\s+PENDING/)

    writeFileSync(path.join(work, "receipt.pdf"), "Taxi 23.50 EUR\n")
    const uploaded = json(await svc("files", "upload", taskId, path.join(work, "receipt.pdf"), "--submit", "--json"))
    expect(uploaded).toMatchObject({ source: "receipts", filename: "receipt.pdf", sizeBytes: 15, signaled: true })

    expect(ok(await svc("task", "approve", taskId, "--comments", "Receipts match"))).toContain(`Approved the current step of task ${taskId}`)
    expect(json(await svc("task", "approve", taskId, "--json"))).toEqual({ ok: true })

    const [done, snapshots, again] = await Promise.all([
      svc("task", "ui", taskId, "--json"),
      svc("task", "snapshots", taskId, "--json"),
      svc("task", "approve", taskId)
    ])
    expect(json(done).task.status).toBe("COMPLETED")
    expect(json(done).steps).toEqual([
      { id: "upload_receipts", title: "Upload receipts", status: "COMPLETED" },
      { id: "review_expenses", title: "Review flagged expenses", status: "COMPLETED" },
      { id: "sign_off", title: "Sign off", status: "COMPLETED" }
    ])
    expect(json(snapshots)).toMatchObject({
      upload_receipts: { documentRef: uploaded.documentRef },
      review_expenses: { decision: "approved", reason: "Receipts match" },
      sign_off: { decision: "approved", reason: null }
    })
    failsWith(again, 1, /\[400 Bad Request\]/)
  }, 60_000)
})

describe("task", () => {
  it("snapshots as text; row-action reject_row and edit_cell", async () => {
    const [snapshots, rowReject, rowEdit] = await Promise.all([
      svc("task", "snapshots", REVIEW_TASK),
      svc("task", "row-action", REVIEW_TASK, "reject_row", ROW.rowReject),
      svc("task", "row-action", REVIEW_TASK, "edit_cell", ROW.rowEdit, "--field", "amount_gross", "--value", "86.5", "--json")
    ])
    expect(ok(snapshots)).toMatch(/^upload_receipts\n\s+\{\n\s+"files": 3,/)
    expect(ok(rowReject)).toContain(`Sent reject_row on expenses row ${ROW.rowReject} to task ${REVIEW_TASK}`)
    expect(json(rowEdit)).toEqual({ ok: true })
  }, 60_000)
})

describe("events", () => {
  it("list prints the timeline with positions; follow prints new events in timeline order, one growing line per reasoning group", async () => {
    const table = ok(await svc("events", "list", REVIEW_TASK))
    expect(table).toMatch(/^POSITION\s+SEQ\s+CREATED\s+TYPE\s+SOURCE\s+GROUP\s+PAYLOAD\n\d+\s+1\s+/)
    // The seeded events first (the row actions of an earlier test may have added audit events after them).
    const rows = table.trimEnd().split("\n").slice(1).map((l) => l.split(/\s+/))
    expect(rows.slice(0, 3).map((r) => r[1])).toEqual(["1", "2", "3"])
    // Positions: the timeline's order, each once.
    const positions = rows.map((r) => Number(r[0]))
    expect(positions).toEqual([...positions].sort((a, b) => a - b))
    expect(new Set(positions).size).toBe(positions.length)
    // --after a position lists only what follows it.
    const after = ok(await svc("events", "list", REVIEW_TASK, "--after", String(positions[0]), "--limit", "1"))
    expect(after.split("\n")[1]!.split(/\s+/).slice(0, 2)).toEqual([String(positions[1]), "2"])
    expect(after).toContain(`(more: svc events list ${REVIEW_TASK} --after ${positions[1]})`)

    const post = async (seq: number, type: string, payload: object, groupKey?: string) => {
      const res = await fetch(`${gw.url}/v1/tasks/${REVIEW_TASK}/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ type, source: "worker", sourceLabel: "Reviewer", seq, payload, ...(groupKey ? { groupKey } : {}) })
      })
      expect(res.status).toBe(200)
    }

    const follow = spawnSvc(["events", "follow", REVIEW_TASK, "--interval", "0.2", "--until-done", "--timeout", "40"], {
      cwd: work,
      env: { SVC_URL: gw.url }
    })
    // The seeded deltas of group review-1 already form one line.
    await eventually(() => follow.stdout().includes("4 need attention"), 15_000, "the seeded events")

    // The worker's own next seqs: the gateway's audit events took none of them.
    await post(4, "reasoning.delta", { text: "Matching" }, "review-2")
    await eventually(() => follow.stdout().includes("Matching"), 10_000, "the first delta")
    // Later deltas of the same group extend that line, across polls.
    await post(5, "reasoning.delta", { text: " receipts..." }, "review-2")
    await post(6, "reasoning.delta", { text: " done." }, "review-2")
    await post(7, "step.completed", { step: "review_expenses" })
    await eventually(() => follow.stdout().includes("step.completed [Reviewer]"), 10_000, "the step event")

    // The task ending (rejected here, with comments) ends `follow --until-done`.
    expect(ok(await svc("task", "reject", REVIEW_TASK, "-m", "Wrong period"))).toContain(
      `Rejected the current step of task ${REVIEW_TASK}`
    )
    const end = await follow.done
    expect(end.code, end.stderr).toBe(0)
    // Audit lines of an earlier test's row actions (row.rejected, row.edited) may sit between #2 and
    // the worker's; the rest is in timeline order.
    const lines = end.stdout.trimEnd().split("\n").filter((l) => !/ row\.(rejected|edited) /.test(l))
    // The engine's own events close the timeline: the step decided, the task FAILED. They take no
    // worker seq: theirs is their position.
    const events = ((await (await fetch(`${gw.url}/v1/tasks/${REVIEW_TASK}/events`)).json()) as { events: Array<any> }).events
    const [decided, failed] = events.filter((e) => e.origin === "gateway" && !/^row\./.test(e.type)).slice(-2)
    expect([decided.type, failed.type]).toEqual(["step.completed", "task.status_changed"])
    for (const e of [decided, failed]) expect(String(e.seq)).toBe(e.position)
    expect(lines).toHaveLength(6)
    expect(lines[0]).toMatch(/^#1 09:06:00 step\.completed \[Receipts step\] \{"step":"upload_receipts"\}$/)
    expect(lines[1]).toMatch(/^#2 09:07:00 Expense reviewer \(review-1\) ▸ Checking 6 expenses against the policy\.\.\. 4 need attention: .*category\.$/)
    expect(lines[2]).toMatch(/^#4 \d\d:\d\d:\d\d Reviewer \(review-2\) ▸ Matching receipts\.\.\. done\.$/)
    expect(lines[3]).toMatch(/^#7 \d\d:\d\d:\d\d step\.completed \[Reviewer\] \{"step":"review_expenses"\}$/)
    // As sentences: who decided (nobody named: this gateway has no SVC_ACTOR_HEADER), what, old → new.
    expect(lines[4]).toMatch(new RegExp(`^#${decided.seq} \\d\\d:\\d\\d:\\d\\d step\\.completed \\[Someone\\] rejected step review_expenses — "Wrong period"$`))
    expect(lines[5]).toMatch(new RegExp(`^#${failed.seq} \\d\\d:\\d\\d:\\d\\d task\\.status_changed \\[workspace\\] Task status changed: IN_PROGRESS → FAILED$`))
  }, 60_000)
})

describe("files", () => {
  it("list, upload with a progress bar, ingest (url, local, inline), download streaming to a file", async () => {
    const big = randomBytes(1_500_000)
    const sources = path.join(gw.dir, "sources")
    mkdirSync(sources, { recursive: true })
    writeFileSync(path.join(sources, "statement.bin"), big)
    writeFileSync(path.join(sources, "inline.txt"), "inline bytes\n")
    writeFileSync(path.join(gw.ingestRoot, "local.csv"), "a,b\n1,2\n")
    const receiptUrl = `${gw.url}/v1/tasks/${REVIEW_TASK}/files/${RECEIPT_DOC}/download`

    const [list, bigUpload, viaUrl, viaLocal, viaInline] = await Promise.all([
      svc("files", "list", REVIEW_TASK, "--source", "receipts"),
      svc("files", "upload", REVIEW_TASK, path.join(sources, "statement.bin"), "--source", "bank_statement", "--progress", "always", "--json"),
      svc("files", "ingest", REVIEW_TASK, "url", receiptUrl, "--source", "receipts", "--file-name", "copy.txt", "--json"),
      svc("files", "ingest", REVIEW_TASK, "local", path.join(gw.ingestRoot, "local.csv"), "--source", "ledger_export", "--json"),
      svc("files", "ingest", REVIEW_TASK, "inline", path.join(sources, "inline.txt"), "--source", "notes")
    ])
    expect(ok(list)).toMatch(/^ID\s+UPLOADED\s+CONTENT TYPE\s+FILENAME\n/)
    expect(ok(list)).toMatch(/7eaa8264-3830-4a32-ab40-c343ff3a2de5\s+\S+\s+text\/plain\s+receipt-001\.txt/)

    const uploaded = json(bigUpload)
    expect(uploaded).toMatchObject({ filename: "statement.bin", sizeBytes: big.length, source: "bank_statement", signaled: false })
    expect(bigUpload.stderr).toMatch(/uploading statement\.bin \[#+\] 100%\s+1\.4 MB \/ 1\.4 MB/)

    expect(json(viaUrl)).toMatchObject({ filename: "copy.txt", sizeBytes: 23, source: "receipts" })
    expect(json(viaLocal)).toMatchObject({ filename: "local.csv", source: "ledger_export", sizeBytes: 8 })
    expect(ok(viaInline)).toMatch(/Stored\s+inline\.txt \(13 B, text\/plain\)\nDocument\s+[0-9a-f-]{36}\nSource\s+notes/)

    // Download: streamed into the stored file name in the working directory, byte for byte.
    const downloaded = await svc("files", "download", REVIEW_TASK, uploaded.documentRef)
    expect(ok(downloaded)).toContain("Saved statement.bin (1.4 MB, application/octet-stream)")
    expect(readFileSync(path.join(work, "statement.bin")).equals(big)).toBe(true)
    const toPath = await svc("files", "download", REVIEW_TASK, RECEIPT_DOC, "-o", path.join(work, "r1.txt"), "--json")
    expect(json(toPath)).toMatchObject({ bytes: 23, contentType: "text/plain", filename: "receipt-001.txt" })
    expect(readFileSync(path.join(work, "r1.txt"), "utf8")).toBe("Blue Bottle 182.40 USD\n")

    // A stored name of 255 characters can be 1,020 bytes, past a file system's 255: saved under
    // the name cut to fit by characters, its extension kept (the write had failed ENAMETOOLONG).
    const long = await fetch(`${gw.url}/v1/tasks/${REVIEW_TASK}/files`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ source: "receipts", fileName: `${"📄".repeat(250)}.pdf`, data: Buffer.from("long name").toString("base64") })
    })
    expect(long.status).toBe(201)
    const { documentRef } = await long.json() as { documentRef: string }
    const fitted = `${"📄".repeat(62)}.pdf`
    expect(ok(await svc("files", "download", REVIEW_TASK, documentRef))).toContain(`Saved ${fitted} (9 B`)
    expect(readFileSync(path.join(work, fitted), "utf8")).toBe("long name")
  }, 60_000)
})

describe("data", () => {
  it("ingests a JSON array and an NDJSON file as one bulk batch each", async () => {
    writeFileSync(path.join(work, "records.json"), JSON.stringify([{ merchant: "A", amount: 1 }, { merchant: "B", amount: 2 }]))
    writeFileSync(path.join(work, "records.ndjson"), "{\"merchant\":\"C\"}\n\n{\"merchant\":\"D\"}\n{\"merchant\":\"E\"}\n")
    const [fromJson, fromNdjson] = await Promise.all([
      svc("data", "ingest", SIGNOFF_TASK, path.join(work, "records.json"), "--kind", "expense"),
      svc("data", "ingest", SIGNOFF_TASK, path.join(work, "records.ndjson"), "--json")
    ])
    expect(ok(fromJson)).toMatch(/^Ingested 2 record\(s\) into task .*\nID\s+STATUS\s+SIGNALED\n[0-9a-f-]{36}\s+accepted\s+no\n/)
    const rows = json(fromNdjson)
    expect(rows).toHaveLength(3)
    expect(rows.every((r: any) => r.status === "accepted" && r.signaled === false)).toBe(true)
  }, 60_000)
})

describe("subledger", () => {
  it("rejects a row and edits a cell; an illegal transition is an API error", async () => {
    const [rejected, edited] = await Promise.all([
      svc("subledger", "reject", "expenses", ROW.reject),
      svc("subledger", "edit", "expenses", ROW.edit, "amount_gross", "1200.5", "--json")
    ])
    expect(ok(rejected)).toMatch(/Row\s+0349944d-fb03-40cf-a73a-21b10c2a61e9\nStatus\s+REJECTED/)
    expect(json(edited)).toEqual({ status: "OK", rowId: ROW.edit, field: "amount_gross", value: 1200.5 })
    failsWith(await svc("subledger", "reject", "expenses", ROW.reject), 1, "svc: Row cannot be rejected from status REJECTED [400 Bad Request]")
  }, 60_000)
})

describe("gl", () => {
  it("status, disconnect, connect (waits until the adapter completes the session), connect timeout", async () => {
    expect(ok(await svc("gl", "status"))).toMatch(/^Connected\s+yes\nTenant\s+ded92d4b.*\nProvider\s+merge\nService\s+quickbooks_online/)
    expect(ok(await svc("gl", "disconnect"))).toContain("GL connection removed.")

    const connect = spawnSvc(["gl", "connect", "--service", "xero", "--interval", "0.2", "--timeout", "30", "--json"], {
      cwd: work,
      env: { SVC_URL: gw.url }
    })
    await eventually(() => connect.stdout().includes("\n"), 15_000, "the session")
    const session = JSON.parse(connect.stdout().split("\n")[0]!)
    expect(session.sessionUrl).toBe(`${gw.url}/workspace/gl/connect/${session.consumerId}`)
    const page = await fetch(session.sessionUrl)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`value="xero" checked`)
    // What the connect page does when the person authorizes: it posts to its own URL + /complete.
    const done = await fetch(`${session.sessionUrl}/complete`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ service: "xero" })
    })
    expect(done.status).toBe(204)
    const end = await connect.done
    expect(end.code, end.stderr).toBe(0)
    const status = JSON.parse(end.stdout.trimEnd().split("\n")[1]!)
    expect(status).toMatchObject({ connected: true, tenantId: ACME, service: "xero", status: "ACTIVE" })

    const timedOut = await svc("gl", "connect", "--timeout", "0.5", "--interval", "0.2")
    expect(timedOut.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/workspace\/gl\/connect\/[0-9a-f-]{36}\n$/)
    expect(timedOut.stderr).toContain("Open the URL above")
    failsWith(timedOut, 1, /timed out after 0\.5s waiting for connect session [0-9a-f-]{36} to complete/)
  }, 60_000)
})

describe("agents", () => {
  /** `svc agents ...` against the admin listener: SVC_ADMIN_URL and the SVC_ADMIN_TOKEN bearer token. */
  const admin = (...args: Array<string>) =>
    runSvc(["agents", ...args], { cwd: work, env: { SVC_URL: gw.url, SVC_ADMIN_URL: gw.adminUrl, SVC_ADMIN_TOKEN: gw.adminToken } })

  it("register prints the key once with a warning; list, get, add-version, delete", async () => {
    const [registered, registeredJson] = await Promise.all([
      admin("register", "claude://agent_123", "--tenant", "acme", "--name", "Reviewer"),
      runSvc(
        ["agents", "register", "OpenAI://asst_9", "--tenant", "acme", "--name", "Matcher", "--json", "--admin-url", gw.adminUrl],
        { cwd: work, env: { SVC_ADMIN_URL: "http://127.0.0.1:1", SVC_ADMIN_TOKEN: gw.adminToken } } // the flag wins over SVC_ADMIN_URL
      )
    ])
    const out = ok(registered)
    expect(out).toMatch(/^Registered agent\s+[0-9a-f-]{36}\nName\s+Reviewer\nReference\s+claude:\/\/agent_123\n/)
    const apiKey = /API key\s+(\S+)/.exec(out)![1]!
    expect(apiKey.length).toBeGreaterThan(16)
    expect(registered.stderr).toContain("WARNING: store the API key now")
    const id = /Registered agent\s+(\S+)/.exec(out)![1]!
    const matcher = json(registeredJson)
    expect(matcher).toMatchObject({ kind: "openai", externalRef: "openai://asst_9", tenantId: ACME, name: "Matcher" })
    expect(typeof matcher.apiKey).toBe("string")

    // The same reference again for the same tenant: a conflict naming the agent that has it, not a second agent.
    failsWith(
      await admin("register", "claude://agent_123", "--tenant", "acme", "--name", "Reviewer again"),
      1,
      `claude://agent_123 is already registered for this tenant as agent ${id}; delete it first to register it again [409 Conflict]`
    )
    expect(ok(await admin("add-version", id, "v1", "--config", "{\"model\":\"m1\"}"))).toContain(
      `Recorded version v1 of agent ${id}`
    )
    const [listJson, get] = await Promise.all([
      admin("list", "--tenant-id", ACME, "--json"),
      admin("get", id)
    ])
    expect(listJson.stdout).not.toContain(apiKey)
    const listed = json(listJson)
    expect(listed.map((a: any) => a.name).sort()).toEqual(["Matcher", "Reviewer"])
    expect(listed.some((a: any) => "apiKey" in a)).toBe(false)
    expect(ok(get)).toMatch(/VERSION\s+CREATED\s+CONFIG\nv1\s+\S+\s+\{"model":"m1"\}/)

    expect(ok(await admin("delete", id))).toContain(`Deleted agent ${id}`)
    // Gone: the registry's 404 is an API error like the gateway's.
    failsWith(await admin("delete", id), 1, `Agent ${id} not found [404 Not Found]`)
  }, 60_000)

  it("needs the admin listener and its token: 401 without or with a wrong SVC_ADMIN_TOKEN; the gateway port serves no registry", async () => {
    const [none, wrong, gatewayPort, empty] = await Promise.all([
      runSvc(["agents", "list"], { cwd: work, env: { SVC_ADMIN_URL: gw.adminUrl } }),
      runSvc(["agents", "list"], { cwd: work, env: { SVC_ADMIN_URL: gw.adminUrl, SVC_ADMIN_TOKEN: `${gw.adminToken}x` } }),
      runSvc(["agents", "list", "--admin-url", gw.url], { cwd: work, env: { SVC_ADMIN_TOKEN: gw.adminToken } }),
      runSvc(["agents", "list"], { cwd: work, env: { SVC_ADMIN_URL: gw.adminUrl, SVC_ADMIN_TOKEN: "" } })
    ])
    failsWith(none, 1, /needs Authorization: Bearer <SVC_ADMIN_TOKEN> \[401 Unauthorized\]/)
    failsWith(wrong, 1, /bearer token is not valid .* \[401 Unauthorized\]/)
    failsWith(gatewayPort, 1, /Cannot GET \/workspace\/registry\/agents at http:\/\/127\.0\.0\.1:\d+: the agent registry is on the admin listener/)
    failsWith(empty, 1, /\[401 Unauthorized\]/) // an empty SVC_ADMIN_TOKEN is no token
  }, 60_000)

  it("defaults to the admin listener's default address, http://127.0.0.1:3001", async () => {
    const [help, run] = await Promise.all([
      runSvc(["agents", "list", "--help"], { cwd: work }),
      runSvc(["agents", "list"], { cwd: work })
    ])
    expect(help.stdout).toContain("else http://127.0.0.1:3001")
    // The test gateways never listen there; if something else on this machine does, its answer is not ours to check.
    if (/cannot reach the service/.test(run.stderr)) {
      failsWith(run, 1, "cannot reach the service (GET http://127.0.0.1:3001/workspace/registry/agents)")
    }
  }, 30_000)
})

describe("the Promise client", () => {
  it("answers typed values and rejects with the contract's errors", async () => {
    const client = createGatewayClient(`${gw.url}/`)
    expect(await client.health.health()).toEqual({ status: "ok" })
    expect((await client.entities.listEntities()).map((e) => e.slug)).toEqual(["acme-us", "acme-uk"])
    const error = await client.tasks.getUi({ path: { taskId: UNKNOWN } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NotFound)
    expect(error).toMatchObject({ statusCode: 404, message: `Task ${UNKNOWN} not found` })
    const registry = createRegistryClient(gw.adminUrl, { headers: { authorization: `Bearer ${gw.adminToken}` } })
    expect(Array.isArray(await registry.registry.listAgents({ urlParams: {} }))).toBe(true)
    const refused = await createRegistryClient(gw.adminUrl).registry.listAgents({ urlParams: {} }).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(Unauthorized)
    expect(refused).toMatchObject({ statusCode: 401, error: "Unauthorized" })
  })
})
