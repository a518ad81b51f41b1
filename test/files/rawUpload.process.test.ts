/**
 * The raw upload on the built process: `POST /v1/tasks/:taskId/files/raw`, the body the file
 * itself (its Content-Type the file's), the upload's fields in the query, `x-svc-upload: raw`
 * required. Streamed to a spool file and stored in one transaction: what is served back is the
 * bytes sent, the process does not hold the file in memory, the signal follows the commit, and
 * the size cap, the type and field rules and the cross-site rule hold as for the JSON upload.
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import { createHash, randomBytes } from "node:crypto"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { uploadFileRaw, uploadFileRawWithFetch } from "../../src/client/uploadRaw.js"
import { svc } from "../cli/harness.js"
import { http } from "../support/process.js"
import { builtGatewayOfFile } from "./builtGateway.js"
import { waitFor } from "../support/waitFor.js"

const gw = builtGatewayOfFile()

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const RAW = { "x-svc-upload": "raw" }

const rawUrl = (taskId: string, fields: Record<string, string>) =>
  `${gw.url}/v1/tasks/${taskId}/files/raw?${new URLSearchParams(fields)}`

/** POSTs `body` with `headers` (no defaults): status and parsed answer. */
const post = async (url: string, body: Uint8Array | string, headers: Record<string, string>) => {
  const res = await fetch(url, { method: "POST", headers, body })
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text), text }
}

const download = async (downloadUrl: string) => Buffer.from(await (await fetch(`${gw.url}${downloadUrl}`)).arrayBuffer())

const files = async (taskId: string) => (await http("GET", `${gw.url}/v1/tasks/${taskId}/files`)).body as Array<{ id: string }>

/** The process's resident set, in bytes (Linux). */
const rss = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024

describe("raw uploads", { timeout: 120_000 }, () => {
  it("a large file round-trips byte for byte, typed by its Content-Type, answered like the JSON upload", async () => {
    const taskId = await gw.newTask()
    const bytes = randomBytes(20 * 1024 * 1024 + 12345)
    const res = await post(rawUrl(taskId, { source: "statements", fileName: "big statement.pdf", period: "2026-11" }), bytes, {
      ...RAW,
      "content-type": "application/pdf"
    })
    expect(res.status, res.text.slice(0, 300)).toBe(201)
    expect(res.body).toMatchObject({
      taskId,
      source: "statements",
      filename: "big statement.pdf",
      contentType: "application/pdf",
      sizeBytes: bytes.length,
      signaled: false
    })
    const got = await download(res.body.downloadUrl)
    expect(got.length).toBe(bytes.length)
    expect(sha(got)).toBe(sha(bytes))
    // The audit event of a stored file, as for the JSON upload.
    const events = (await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body
    expect(JSON.stringify(events)).toContain(res.body.documentRef)
  })

  it("application/octet-stream is typed from the file name; an empty file is stored empty", async () => {
    const taskId = await gw.newTask()
    const csv = await post(rawUrl(taskId, { source: "s", fileName: "rows.csv" }), "a,b\n1,2\n", { ...RAW, "content-type": "application/octet-stream" })
    expect(csv.status, csv.text).toBe(201)
    expect(csv.body.contentType).toBe("text/csv")
    const empty = await post(rawUrl(taskId, { source: "s", fileName: "empty.txt" }), "", { ...RAW, "content-type": "text/plain" })
    expect(empty.status, empty.text).toBe(201)
    expect(empty.body.sizeBytes).toBe(0)
    expect((await download(empty.body.downloadUrl)).length).toBe(0)
  })

  it("a request target the router reads as the path (`*v1/…`: any first character is `/`) is a raw upload too, not a 415", async () => {
    const taskId = await gw.newTask()
    const res = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest({
        host: "127.0.0.1",
        port: Number(new URL(gw.url).port),
        method: "POST",
        path: `*v1/tasks/${taskId}/files/raw?source=s&fileName=rows.csv`,
        headers: { ...RAW, "content-type": "text/csv" }
      }, (answer) => {
        const chunks: Array<Buffer> = []
        answer.on("data", (c: Buffer) => chunks.push(c))
        answer.on("end", () => resolve({ status: answer.statusCode!, text: Buffer.concat(chunks).toString("utf8") }))
      })
      req.on("error", reject)
      req.end("a,b\n")
    })
    expect(res.status, res.text).toBe(201)
    expect(JSON.parse(res.text)).toMatchObject({ taskId, filename: "rows.csv", contentType: "text/csv", sizeBytes: 4 })
  })

  it("the process holds a chunk of the file, not the file: RSS grows by far less than a 30 MiB upload", async () => {
    const taskId = await gw.newTask()
    const size = 30 * 1024 * 1024
    const block = randomBytes(1024 * 1024)
    /** Sends `size` bytes in 1 MiB writes (never the whole file in this process either). */
    const send = () =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(rawUrl(taskId, { source: "s", fileName: "big.bin" }), {
          method: "POST",
          headers: { ...RAW, "content-type": "application/octet-stream", "content-length": String(size) }
        }, (res) => {
          let body = ""
          res.on("data", (c) => (body += c))
          res.on("end", () => resolve({ status: res.statusCode!, body }))
        })
        req.on("error", reject)
        let sent = 0
        const more = () => {
          while (sent < size) {
            sent += block.length
            if (!req.write(block)) return void req.once("drain", more)
          }
          req.end()
        }
        more()
      })
    // The first large upload grows the process once (measured: about +27 MB, kept for the next
    // ones: the store's working set, the heap's room); what matters is that each upload after it
    // adds no copy of its file (measured: +14-16 MB while one ran: socket chunks until collected).
    const first = await send()
    expect(first.status, first.body.slice(0, 300)).toBe(201)
    const peaks: Array<number> = []
    for (let i = 0; i < 2; i++) {
      const before = rss(gw.service.pid)
      let peak = before
      const sampler = setInterval(() => {
        peak = Math.max(peak, rss(gw.service.pid))
      }, 5)
      try {
        const answer = await send()
        expect(answer.status, answer.body.slice(0, 300)).toBe(201)
        expect(JSON.parse(answer.body).sizeBytes).toBe(size)
      } finally {
        clearInterval(sampler)
      }
      peaks.push(peak - before)
    }
    // The JSON path holds the whole body at least once, and its decoded bytes: +30 MiB or more.
    expect(Math.max(...peaks), `RSS growth per upload: ${peaks.join(", ")}`).toBeLessThan(20 * 1024 * 1024)
  })

  it("a file over the size cap is a 413 naming the body, declared or chunked, and nothing is stored", async () => {
    const taskId = await gw.newTask()
    const tooBig = new Uint8Array(32 * 1024 * 1024 + 1)
    const declared = await post(rawUrl(taskId, { source: "s" }), tooBig, { ...RAW, "content-type": "application/pdf" })
    expect(declared.status).toBe(413)
    expect(declared.body.message).toMatch(/^body: the file exceeds the 33554432-byte limit/)
    const chunked = await fetch(rawUrl(taskId, { source: "s" }), {
      method: "POST",
      headers: { ...RAW, "content-type": "application/pdf" },
      body: new Blob([tooBig]).stream(),
      duplex: "half"
    } as RequestInit)
    expect(chunked.status).toBe(413)
    expect(((await chunked.json()) as { message: string }).message).toMatch(/^body: the file exceeds/)
    expect(await files(taskId)).toEqual([])
  })

  it("a body without a media type is a 415; a missing or bad field is a 400 naming it; nothing is stored", async () => {
    const taskId = await gw.newTask()
    for (const type of [undefined, "pdf", "text/"]) {
      // Bytes: fetch gives a string body a type of its own.
      const res = await post(rawUrl(taskId, { source: "s" }), new Uint8Array([120]), { ...RAW, ...(type !== undefined ? { "content-type": type } : {}) })
      expect(res.status, `${type}: ${res.text}`).toBe(415)
      expect(res.body.message).toMatch(/^Content-Type must be the file's media type/)
    }
    const noSource = await post(rawUrl(taskId, { fileName: "a.pdf" }), "x", { ...RAW, "content-type": "application/pdf" })
    expect(noSource.status).toBe(400)
    expect(noSource.body.message).toMatch(/source/)
    const halfSignal = await post(rawUrl(taskId, { source: "s", signalName: "file_submitted" }), "x", { ...RAW, "content-type": "application/pdf" })
    expect(halfSignal.status).toBe(400)
    expect(halfSignal.body.message).toMatch(/signalTaskId/)
    const badPeriod = await post(rawUrl(taskId, { source: "s", period: "2026-13" }), "x", { ...RAW, "content-type": "application/pdf" })
    expect(badPeriod.status).toBe(400)
    expect(badPeriod.body.message).toMatch(/period/)
    const nul = await post(rawUrl(taskId, { source: "a\u0000b" }), "x", { ...RAW, "content-type": "application/pdf" })
    expect(nul.status).toBe(400)
    expect(nul.body.message).toMatch(/source.*NUL/)
    const unknown = await post(rawUrl(taskId, { source: "s", data: "x" }), "x", { ...RAW, "content-type": "application/pdf" })
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toMatch(/data/)
    expect(await files(taskId)).toEqual([])
  })

  it("a simple cross-site POST is refused: no x-svc-upload header, or another site's Origin", async () => {
    const taskId = await gw.newTask()
    // What a form or a no-cors fetch can send: a safelisted type, no custom header.
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const res = await post(rawUrl(taskId, { source: "s" }), "x", { "content-type": type })
      expect(res.status, type).toBe(403)
      expect(res.body.message).toMatch(/^x-svc-upload: required/)
    }
    const wrongValue = await post(rawUrl(taskId, { source: "s" }), "x", { "x-svc-upload": "yes", "content-type": "text/plain" })
    expect(wrongValue.status).toBe(403)
    const other = await post(rawUrl(taskId, { source: "s" }), "x", { ...RAW, "content-type": "text/plain", origin: "https://evil.example" })
    expect(other.status).toBe(403)
    expect(other.body.message).toMatch(/^Cross-site write refused/)
    const fetched = await post(rawUrl(taskId, { source: "s" }), "x", { ...RAW, "content-type": "text/plain", "sec-fetch-site": "cross-site" })
    expect(fetched.status).toBe(403)
    // The look-alike path the router takes for the same route is held to the same rule.
    const alike = await post(`${gw.url}/V1//tasks/${taskId}/files/RAW/?source=s`, "{}", { "content-type": "application/json" })
    expect(alike.status).toBe(403)
    expect(await files(taskId)).toEqual([])
  })

  it("a file signal completes the upload step after the commit; a type the step refuses stores nothing", async () => {
    const taskId = await gw.newTask("expense-review")
    const signal = { signalTaskId: taskId, signalName: "file_submitted" }
    const refused = await post(rawUrl(taskId, { source: "receipts", fileName: "r.csv", ...signal }), "a,b\n", { ...RAW, "content-type": "text/csv" })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toMatch(/^contentType: text\/csv .* accepted types: application\/pdf, image\/png/)
    expect(await files(taskId)).toEqual([])
    const ok = await post(rawUrl(taskId, { source: "receipts", fileName: "r.pdf", ...signal }), "%PDF-1.7 receipt", {
      ...RAW,
      "content-type": "application/pdf"
    })
    expect(ok.status, ok.text).toBe(201)
    expect(ok.body.signaled).toBe(true)
    const ui = (await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`)).body
    expect(ui.step.id).toBe("review_expenses")
    // The stored file's event comes before the step it completed.
    const events = (await http("GET", `${gw.url}/v1/tasks/${taskId}/events`)).body.events as Array<unknown>
    const text = events.map((e) => JSON.stringify(e))
    const stored = text.findIndex((t) => t.includes(ok.body.documentRef))
    const completed = text.findIndex((t) => t.includes("step.completed"))
    expect(stored).toBeGreaterThanOrEqual(0)
    expect(completed).toBeGreaterThan(stored)
  })

  it("a retry with the same Idempotency-Key stores once; the same key with other bytes is a 409", async () => {
    const taskId = await gw.newTask()
    const headers = { ...RAW, "content-type": "application/pdf", "idempotency-key": `raw-${taskId}` }
    const bytes = randomBytes(600 * 1024)
    const first = await post(rawUrl(taskId, { source: "s", fileName: "a.pdf" }), bytes, headers)
    const again = await post(rawUrl(taskId, { source: "s", fileName: "a.pdf" }), bytes, headers)
    expect(first.status, first.text).toBe(201)
    expect(again.body).toEqual(first.body)
    const other = await post(rawUrl(taskId, { source: "s", fileName: "a.pdf" }), randomBytes(600 * 1024), headers)
    expect(other.status, other.text).toBe(409)
    expect((await files(taskId)).length).toBe(1)
  })

  it("a client that leaves mid-body stores nothing and leaves no spool file open", async () => {
    const taskId = await gw.newTask()
    const fds = () => readdirSync(`/proc/${gw.service.pid}/fd`).length
    const before = fds()
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const req = httpRequest(rawUrl(taskId, { source: "s" }), {
          method: "POST",
          headers: { ...RAW, "content-type": "application/pdf", "content-length": String(8 * 1024 * 1024) }
        })
        req.on("error", () => resolve())
        req.write(randomBytes(1024 * 1024), () => setTimeout(() => req.destroy(), 50))
        req.on("close", () => resolve())
      })
    }
    await waitFor(`the gateway's open files to fall back to ${before}`, () => fds() <= before, {
      timeoutMs: 10_000,
      everyMs: 100,
      seen: () => `open files: ${fds()}`
    })
    expect(fds()).toBeLessThanOrEqual(before)
    expect(await files(taskId)).toEqual([])
    // And the next upload is taken whole.
    const ok = await post(rawUrl(taskId, { source: "s" }), randomBytes(1024), { ...RAW, "content-type": "application/pdf" })
    expect(ok.status, ok.text).toBe(201)
    expect((await files(taskId)).map((f) => f.id)).toEqual([ok.body.documentRef])
  })

  it("a trickle is cut at the minimum rate (408), as a body read before routing is", async () => {
    const taskId = await gw.newTask()
    const started = Date.now()
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(rawUrl(taskId, { source: "slow" }), {
        method: "POST",
        headers: { ...RAW, "content-type": "application/pdf", "content-length": String(1024 * 1024) }
      }, (res) => {
        let body = ""
        res.on("data", (c) => (body += c))
        res.on("end", () => resolve({ status: res.statusCode!, body }))
      })
      // 4 KiB a second, a quarter of the 16 KiB/s accepted.
      const timer = setInterval(() => req.write(randomBytes(4096)), 1000)
      req.on("close", () => clearInterval(timer))
      req.on("error", (e) => (clearInterval(timer), reject(e)))
    })
    expect(answer.status, answer.body).toBe(408)
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(await files(taskId)).toEqual([])
  })

  it("the typed client's uploadFileRaw and uploadFileRawWithFetch send the file as its bytes", async () => {
    const taskId = await gw.newTask()
    const bytes = randomBytes(3 * 1024 * 1024 + 7)
    const viaEffect = await Effect.runPromise(
      uploadFileRaw(gw.url, { taskId, fields: { source: "client", fileName: "a.bin" }, contentType: "image/png", body: bytes }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
    )
    expect(viaEffect).toMatchObject({ source: "client", filename: "a.bin", contentType: "image/png", sizeBytes: bytes.length })
    expect(sha(await download(viaEffect.downloadUrl))).toBe(sha(bytes))
    const viaFetch = await uploadFileRawWithFetch(gw.url, {
      taskId,
      fields: { source: "client", fileName: "b.bin" },
      contentType: "application/octet-stream",
      body: new Blob([bytes])
    })
    expect(viaFetch.sizeBytes).toBe(bytes.length)
    expect(sha(await download(viaFetch.downloadUrl))).toBe(sha(bytes))
    // Its errors are the contract's.
    await expect(uploadFileRawWithFetch(gw.url, {
      taskId: "00000000-0000-4000-8000-000000000000",
      fields: { source: "client" },
      contentType: "text/plain",
      body: new Uint8Array([1])
    })).rejects.toMatchObject({ _tag: "NotFound" })
  })

  it("svc files upload sends the file raw", async () => {
    const taskId = await gw.newTask()
    const bytes = randomBytes(2 * 1024 * 1024)
    const file = join(gw.dir, "cli upload.pdf")
    writeFileSync(file, bytes)
    const run = await svc(["files", "upload", taskId, file, "--source", "cli", "--json"], { env: { SVC_URL: gw.url } })
    expect(run.code, run.stderr).toBe(0)
    const result = JSON.parse(run.stdout)
    expect(result).toMatchObject({ filename: "cli upload.pdf", contentType: "application/pdf", sizeBytes: bytes.length })
    expect(sha(await download(result.downloadUrl))).toBe(sha(bytes))
    // The request log is written in batches (a flush every few milliseconds), so its line may
    // follow the answer: polled for.
    await expect.poll(() => gw.service.output()).toContain(`"method":"POST","route":"/v1/tasks/:taskId/files/raw","path":"/v1/tasks/${taskId}/files/raw","status":201`)
  })
})
