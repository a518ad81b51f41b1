import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { attachment } from "../../src/http/output/contentDisposition.js"
import { exampleFixture, expectError, raw, withGateway } from "../support/gateway.js"
import { DOCUMENT, EXPENSE_TASK, GLOBEX, GLOBEX_TASK, MISSING } from "../support/world.js"

const GLOBEX_DOC = "5b0c7f7e-1d7a-4a57-9d1e-2f4b1a0c9e11"

const files = `/v1/tasks/${EXPENSE_TASK}/files`
const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64")

describe("POST /v1/tasks/:taskId/files (upload)", () => {
  it.effect("persists, then returns UploadResult; bytes, name and type round-trip through download", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13])
        const res = yield* raw("POST", files, { source: "receipts", data: b64(bytes), fileName: "scan.pdf", period: "2026-11" })
        expect(res.status).toBe(201)
        expect(res.body).toMatchObject({
          taskId: EXPENSE_TASK, source: "receipts", filename: "scan.pdf", contentType: "application/pdf", sizeBytes: 7, signaled: false
        })
        const dl = yield* raw("GET", res.body.downloadUrl)
        expect(dl.status).toBe(200)
        expect(dl.headers["content-type"]).toBe("application/pdf")
        expect(dl.headers["content-disposition"]).toBe('attachment; filename="scan.pdf"')
        expect(dl.bytes.equals(bytes)).toBe(true)
      })
    ))

  it.effect("reads the task once (in the write); another tenant's task answers exactly like a missing one", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        const ok = yield* raw("POST", files, { source: "receipts", data: b64("x") })
        expect(ok.status).toBe(201)
        expect(ws.calls.get("getTask") ?? 0).toBe(0)
        expect(ws.calls.get("putDocument")).toBe(1)
        const foreign = yield* raw("POST", `/v1/tasks/${GLOBEX_TASK}/files`, { source: "s", data: b64("x") })
        const missing = yield* raw("POST", `/v1/tasks/${MISSING}/files`, { source: "s", data: b64("x") })
        expectError(foreign, 404, "Not Found")
        expect(foreign.body.message.replace(GLOBEX_TASK, "")).toBe(missing.body.message.replace(MISSING, ""))
      })
    ))

  it.effect("content type: given, else guessed from the name, else octet-stream; name defaults to <source>-<timestamp>", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const given = yield* raw("POST", files, { source: "s", data: b64("x"), fileName: "a.csv", contentType: "text/x-custom" })
        expect(given.body.contentType).toBe("text/x-custom")
        const guessed = yield* raw("POST", files, { source: "s", data: b64("x"), fileName: "a.csv" })
        expect(guessed.body.contentType).toBe("text/csv")
        const unnamed = yield* raw("POST", files, { source: "bank_statement", data: b64("x") })
        expect(unnamed.body.filename).toMatch(/^bank_statement-\d{4}-\d{2}-\d{2}T/)
        expect(unnamed.body.contentType).toBe("application/octet-stream")
      })
    ))

  it.effect("signals after persist when signalTaskId and signalName are given (submit_file completes the step)", () =>
    withGateway((ws) =>
      Effect.gen(function*() {
        yield* ws.setTask(EXPENSE_TASK, { currentStep: "upload_receipts" })
        const ui = yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/ui`)
        const action = ui.body.step.args.actions[0]
        expect(action).toMatchObject({ type: "submit_file", path: `/v1/tasks/${EXPENSE_TASK}/files/ingest`, signalTaskId: EXPENSE_TASK })
        const res = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/files/ingest`, {
          source: "receipts",
          fileRef: { provider: "inline_base64", data: b64("receipt") },
          fileName: "r.pdf",
          signalTaskId: action.signalTaskId,
          signalName: action.signalName
        })
        expect(res.status).toBe(201)
        expect(res.body.signaled).toBe(true)
        expect(yield* ws.signals).toMatchObject([{ name: action.signalName, payload: { documentRef: res.body.documentRef } }])
        expect((yield* ws.task(EXPENSE_TASK))?.currentStep).toBe("review_expenses")
      })
    ))

  it.effect("400s: strict base64, period a real month, signal pair, missing source", () =>
    withGateway(() =>
      Effect.gen(function*() {
        expectError(yield* raw("POST", files, { source: "s", data: "not base64!" }), 400, "Bad Request", "data")
        expectError(yield* raw("POST", files, { source: "s", data: "QUJD=" }), 400, "Bad Request", "base64")
        expectError(yield* raw("POST", files, { source: "s", data: b64("x"), period: "2026-13" }), 400, "Bad Request", "period")
        expectError(yield* raw("POST", files, { source: "s", data: b64("x"), period: "2026-1" }), 400, "Bad Request", "period")
        expectError(yield* raw("POST", files, { source: "s", data: b64("x"), signalTaskId: EXPENSE_TASK }), 400, "Bad Request", "signalName")
        expectError(yield* raw("POST", files, { data: b64("x") }), 400, "Bad Request", "source")
        expectError(yield* raw("POST", files, { source: "s", data: b64("x"), contentType: "pdf" }), 400, "Bad Request", "contentType")
        expectError(yield* raw("POST", `/v1/tasks/${GLOBEX_TASK}/files`, { source: "s", data: b64("x") }), 404, "Not Found")
      })
    ))
})

describe("POST /v1/tasks/:taskId/files/ingest", () => {
  it.effect("inline_base64 round-trips; an unknown provider lists the known ones; bad provider fields are 400", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const ok = yield* raw("POST", `${files}/ingest`, { source: "s", fileRef: { provider: "inline_base64", data: b64("hello") }, fileName: "h.txt" })
        expect(ok.status).toBe(201)
        expect(ok.body).toMatchObject({ filename: "h.txt", contentType: "text/plain", sizeBytes: 5 })
        expect((yield* raw("GET", ok.body.downloadUrl)).text).toBe("hello")
        expectError(yield* raw("POST", `${files}/ingest`, { source: "s", fileRef: { provider: "s3", bucket: "b" } }), 400, "Bad Request", "inline_base64")
        expectError(yield* raw("POST", `${files}/ingest`, { source: "s", fileRef: { provider: "inline_base64" } }), 400, "Bad Request", "fileRef.data")
        expectError(yield* raw("POST", `${files}/ingest`, { source: "s", fileRef: { provider: "inline_base64", data: "***" } }), 400, "Bad Request", "base64")
        expectError(yield* raw("POST", `${files}/ingest`, { source: "s" }), 400, "Bad Request", "fileRef")
      })
    ))
})

describe("GET /v1/tasks/:taskId/files", () => {
  it.effect("at most 20, newest upload first, optional source filter, downloadUrl per document", () =>
    withGateway(() =>
      Effect.gen(function*() {
        for (let i = 0; i < 22; i++) {
          yield* raw("POST", files, { source: i % 2 === 0 ? "even" : "odd", data: b64(`f${i}`), fileName: `f${i}.txt` })
        }
        const all = yield* raw("GET", files)
        expect(all.status).toBe(200)
        expect(all.body).toHaveLength(20)
        expect(all.body[0]).toEqual({
          id: expect.any(String), filename: "f21.txt", contentType: "text/plain", uploadedAt: expect.any(String),
          downloadUrl: `/v1/tasks/${EXPENSE_TASK}/files/${all.body[0].id}/download`
        })
        const times = all.body.map((d: any) => Date.parse(d.uploadedAt))
        expect([...times].sort((a, b) => b - a)).toEqual(times)
        const even = yield* raw("GET", `${files}?source=even`)
        expect(even.body.map((d: any) => d.filename)).toEqual([20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0].map((i) => `f${i}.txt`))
        expect((yield* raw("GET", `${files}?source=receipts`)).body.map((d: any) => d.id)).toEqual([DOCUMENT])
        expectError(yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/files`), 404, "Not Found")
      })
    ))
})

describe("GET /v1/tasks/:taskId/files/:documentRef/download", () => {
  it.effect("streams the stored bytes with the stored Content-Type; taskId is not enforced; other tenants 404", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const dl = yield* raw("GET", `/v1/tasks/${MISSING}/files/${DOCUMENT}/download`)
        expect(dl.status).toBe(200)
        expect(dl.headers["content-type"]).toBe("text/plain")
        expect(dl.headers["content-disposition"]).toBe('attachment; filename="receipt-001.txt"')
        expect(dl.text).toBe("Blue Bottle 182.40 USD\n")
        expectError(yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files/${MISSING}/download`), 404, "Not Found")
        expectError(yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}/files/nope/download`), 400, "Bad Request", "documentRef")
      })
    ))

  it.effect("another tenant's document answers 404 exactly like a missing one", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const foreign = yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/files/${GLOBEX_DOC}/download`)
        const missing = yield* raw("GET", `/v1/tasks/${GLOBEX_TASK}/files/${MISSING}/download`)
        expectError(foreign, 404, "Not Found")
        expect(foreign.body.message.replace(GLOBEX_DOC, "")).toBe(missing.body.message.replace(MISSING, ""))
      }), {
      fixture: {
        ...exampleFixture,
        documents: [...exampleFixture.documents, {
          ...exampleFixture.documents[0]!, id: GLOBEX_DOC, tenantId: GLOBEX, taskId: GLOBEX_TASK
        }]
      }
    }))
})

describe("Content-Disposition (RFC 6266)", () => {
  it("plain ASCII names get filename only; others add filename* in UTF-8; quotes and controls are neutralised", () => {
    expect(attachment("report.pdf")).toBe('attachment; filename="report.pdf"')
    expect(attachment("Überweisung März.pdf")).toBe(
      "attachment; filename=\"_berweisung M_rz.pdf\"; filename*=UTF-8''%C3%9Cberweisung%20M%C3%A4rz.pdf"
    )
    expect(attachment("a\"b.txt")).toContain("filename=\"a'b.txt\"")
    expect(attachment("x\r\nSet-Cookie: y.txt")).not.toMatch(/[\r\n]/)
    expect(attachment("../../etc/passwd")).toBe('attachment; filename=".._.._etc_passwd"')
  })
})
