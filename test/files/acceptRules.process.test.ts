/**
 * On the built process: a file signal (`file_submitted`) for a FILE_UPLOAD
 * step whose `displayHint.config.accept` does not admit the document is a 400 naming the accepted
 * types, decided before anything is stored; the console decides with the same function
 * (src/api/fileAccept.ts). The demo's expense-review starts at upload_receipts, which accepts
 * application/pdf and image/png; bank-reconciliation's upload step accepts anything.
 */
import { describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { builtGatewayOfFile } from "./builtGateway.js"
import { waitFor } from "../support/waitFor.js"

const gw = builtGatewayOfFile()

const data = Buffer.from("%PDF-1.7 not really").toString("base64")
const signal = (taskId: string) => ({ signalTaskId: taskId, signalName: "file_submitted" })
const upload = (taskId: string, meta: Record<string, unknown>) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "receipts", data, ...signal(taskId), ...meta })
const ingest = (taskId: string, meta: Record<string, unknown>) =>
  http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
    source: "receipts",
    fileRef: { provider: "inline_base64", data },
    ...signal(taskId),
    ...meta
  })
const currentStep = async (taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body.step?.id
const files = async (taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)).body as Array<unknown>

describe("upload type rules of a FILE_UPLOAD step", { timeout: 60_000 }, () => {
  it("refuse a file the step does not accept, naming the accepted types, and store nothing", async () => {
    const taskId = await gw.newTask("expense-review")
    expect(await currentStep(taskId)).toBe("upload_receipts")
    const refused = [
      await upload(taskId, { fileName: "notes.txt" }),
      await upload(taskId, { fileName: "scan.pdf", contentType: "text/html" }),
      await ingest(taskId, { fileName: "run.exe" }),
      await ingest(taskId, {}) // no name, no type: application/octet-stream
    ]
    for (const res of refused) {
      expect(res.status, res.text).toBe(400)
      expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
      expect(res.body.message).toMatch(/^contentType: /)
      expect(res.body.message).toContain(`step "upload_receipts"`)
      expect(res.body.message).toContain("application/pdf, image/png")
    }
    expect(await files(taskId)).toEqual([])
    expect(await currentStep(taskId)).toBe("upload_receipts")
  })

  it("admit an accepted file through upload (by type, parameters ignored) and complete the step", async () => {
    const taskId = await gw.newTask("expense-review")
    const res = await upload(taskId, { fileName: "receipt", contentType: "image/PNG; x=y" })
    expect(res.status, res.text).toBe(201)
    expect(res.body.signaled).toBe(true)
    await waitForStep(taskId, "review_expenses")
  })

  it("admit an accepted file through ingest (type guessed from the name) and complete the step", async () => {
    const taskId = await gw.newTask("expense-review")
    const res = await ingest(taskId, { fileName: "Scan.PDF" })
    expect(res.status, res.text).toBe(201)
    expect(res.body.contentType).toBe("application/pdf")
    await waitForStep(taskId, "review_expenses")
  })

  it("do not apply without a file signal, nor to a step that names no types", async () => {
    const taskId = await gw.newTask("expense-review")
    const unsignaled = await http("POST", `${gw.url}/v1/tasks/${taskId}/files`, { source: "notes", data, fileName: "notes.txt" })
    expect(unsignaled.status, unsignaled.text).toBe(201)
    expect(unsignaled.body.signaled).toBe(false)
    const open = await gw.newTask("bank-reconciliation")
    const any = await ingest(open, { fileName: "statement.txt" })
    expect(any.status, any.text).toBe(201)
    await waitForStep(open, "approve_matches")
  })
})

const waitForStep = async (taskId: string, step: string) => {
  let now: string | undefined
  await waitFor(`task ${taskId} to reach step ${step}`, async () => (now = await currentStep(taskId)) === step, {
    timeoutMs: 10_000,
    everyMs: 50,
    seen: () => `current step: ${now}`
  })
}
