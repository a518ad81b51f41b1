/**
 * Large documents on the built process with a SQLite file: their bytes are a file in
 * `<db file>.documents/` (only the record in SQLite), durable before the commit, removed again
 * when the write does not commit, streamed back on download, kept across a restart; small ones
 * stay in the database; a missing file is a logged 503; crash leftovers are swept at start.
 */
import { createClient } from "@libsql/client"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME_US } from "./builtGateway.js"
import { waitFor } from "../support/waitFor.js"

const MiB = 1024 * 1024
const dir = mkdtempSync(join(tmpdir(), "docfiles-"))
const dbFile = join(dir, "workspace.db")
const docsDir = `${dbFile}.documents`
let service: RunningService

// The first-byte bound raised from 2 s: this file is about where documents are kept, and in a
// clean-clone run at load average 10 a 30 MiB upload's connection still got EPIPE at 2 s.
const start = () => startBuilt({ SVC_DATABASE_URL: pathToFileURL(dbFile).href, SVC_MAX_BODY_BYTES: String(64 * MiB), SVC_FIRST_BYTE_TIMEOUT_MS: "10000" })

beforeAll(async () => {
  service = await start()
}, 60_000)

afterAll(async () => {
  await service?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

const newTask = async (workflowId = "bank-reconciliation") => {
  const res = await http("POST", `${service.url}/v1/entities/${ACME_US}/tasks`, {
    workflowId,
    context: workflowId === "expense-review" ? { period: "2026-11" } : { accountId: "1000" }
  })
  if (res.status !== 201 && res.status !== 200) throw new Error(`create task: ${res.status} ${res.text}`)
  return res.body.id as string
}

const raw = async (taskId: string, bytes: Uint8Array, fields: Record<string, string> = {}, headers: Record<string, string> = {}) => {
  const res = await fetch(`${service.url}/v1/tasks/${taskId}/files/raw?${new URLSearchParams({ source: "s", fileName: "f.pdf", ...fields })}`, {
    method: "POST",
    headers: { "x-svc-upload": "raw", "content-type": "application/pdf", ...headers },
    body: bytes
  })
  const text = await res.text()
  return { status: res.status, text, body: text === "" ? undefined : JSON.parse(text) }
}

const json = async (taskId: string, bytes: Uint8Array, fields: Record<string, string> = {}, headers: Record<string, string> = {}) => {
  // Encoded before connecting: fetch encodes a string body only once connected, and on a starved
  // core a 40 MiB one took longer than the gateway waits for a silent connection's first byte
  // (SVC_FIRST_BYTE_TIMEOUT_MS, 2 s): write EPIPE.
  const body = Buffer.from(JSON.stringify({ source: "s", fileName: "f.pdf", ...fields, data: Buffer.from(bytes).toString("base64") }))
  const res = await fetch(`${service.url}/v1/tasks/${taskId}/files`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body
  })
  const text = await res.text()
  return { status: res.status, text, body: text === "" ? undefined : JSON.parse(text) }
}

const download = async (downloadUrl: string) => {
  const res = await fetch(`${service.url}${downloadUrl}`)
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) }
}

/** The documents directory's entries (none when it does not exist yet). */
const stored = () => (existsSync(docsDir) ? readdirSync(docsDir).sort() : [])

const until = async (what: string, check: () => boolean, ms = 10_000): Promise<void> => {
  await waitFor(what, check, { timeoutMs: ms, everyMs: 50 })
}

describe("large documents as files beside the database", { timeout: 180_000 }, () => {
  const kept: Array<{ url: string; sha: string; ref: string }> = []

  it("30 MiB raw and JSON uploads are files beside the database and round-trip byte for byte; small files stay in it", async () => {
    const taskId = await newTask()
    const big = randomBytes(30 * MiB + 7)
    const viaRaw = await raw(taskId, big)
    expect(viaRaw.status, viaRaw.text.slice(0, 300)).toBe(201)
    const viaJson = await json(taskId, big.subarray(0, 30 * MiB - 3))
    expect(viaJson.status, viaJson.text.slice(0, 300)).toBe(201)
    for (const [res, bytes] of [[viaRaw.body, big], [viaJson.body, big.subarray(0, 30 * MiB - 3)]] as const) {
      const file = join(docsDir, res.documentRef)
      expect(statSync(file).size).toBe(bytes.length)
      expect(sha(readFileSync(file))).toBe(sha(bytes))
      const got = await download(res.downloadUrl)
      expect(got.status).toBe(200)
      expect(got.bytes.length).toBe(bytes.length)
      expect(sha(got.bytes)).toBe(sha(bytes))
      kept.push({ url: res.downloadUrl, sha: sha(bytes), ref: res.documentRef })
    }
    // The transactions wrote records, not bytes: database and write-ahead log stay small.
    const wal = existsSync(`${dbFile}-wal`) ? statSync(`${dbFile}-wal`).size : 0
    expect(statSync(dbFile).size + wal).toBeLessThan(4 * MiB)
    // The directory is the gateway's alone.
    expect(statSync(docsDir).mode & 0o777).toBe(0o700)
    expect(stored().filter((n) => n.endsWith(".part"))).toEqual([])
    // Below 1 MiB (4 chunks): in the database, no file.
    const before = stored()
    const small = randomBytes(MiB - 1)
    const smallRaw = await raw(taskId, small)
    const smallJson = await json(taskId, small)
    expect([smallRaw.status, smallJson.status]).toEqual([201, 201])
    expect(stored()).toEqual(before)
    for (const res of [smallRaw.body, smallJson.body]) {
      const got = await download(res.downloadUrl)
      expect(sha(got.bytes)).toBe(sha(small))
    }
    // Exactly 1 MiB: a file.
    const edge = await raw(taskId, randomBytes(MiB))
    expect(edge.status).toBe(201)
    expect(stored()).toContain(edge.body.documentRef)
  })

  it("a write that does not commit leaves no file: an idempotent replay, a key reused with other bytes (refused in the transaction)", async () => {
    const taskId = await newTask("expense-review")
    const bytes = randomBytes(2 * MiB)
    const key = { "idempotency-key": `docfiles-${taskId}` }
    const signal = { signalTaskId: taskId, signalName: "file_submitted" }
    const first = await raw(taskId, bytes, signal, key)
    expect(first.status, first.text).toBe(201)
    const afterFirst = stored()
    expect(afterFirst).toContain(first.body.documentRef)
    // The replay writes its file, then its transaction answers the earlier document.
    const again = await raw(taskId, bytes, signal, key)
    expect(again.body).toEqual(first.body)
    const reused = await raw(taskId, randomBytes(2 * MiB), signal, key)
    expect(reused.status, reused.text).toBe(409)
    // The same through the JSON upload.
    const jsonKey = { "idempotency-key": `docfiles-json-${taskId}` }
    const jsonFirst = await json(taskId, bytes, {}, jsonKey)
    expect(jsonFirst.status, jsonFirst.text).toBe(201)
    const jsonAgain = await json(taskId, bytes, {}, jsonKey)
    expect(jsonAgain.body).toEqual(jsonFirst.body)
    const jsonReused = await json(taskId, randomBytes(2 * MiB), {}, jsonKey)
    expect(jsonReused.status, jsonReused.text).toBe(409)
    afterFirst.push(jsonFirst.body.documentRef)
    afterFirst.sort()
    expect(stored()).toEqual(afterFirst)
    const list = (await http("GET", `${service.url}/v1/tasks/${taskId}/files`)).body as Array<unknown>
    expect(list.length).toBe(2)
  })

  it("concurrent large uploads each get their own file and read back whole", async () => {
    const taskId = await newTask()
    const files = Array.from({ length: 6 }, (_, i) => randomBytes(2 * MiB + i))
    const answers = await Promise.all(files.map((b, i) => (i % 2 === 0 ? raw(taskId, b) : json(taskId, b))))
    expect(answers.map((a) => a.status)).toEqual(files.map(() => 201))
    const names = stored()
    for (const [i, a] of answers.entries()) {
      expect(names).toContain(a.body.documentRef)
      const got = await download(a.body.downloadUrl)
      expect(sha(got.bytes)).toBe(sha(files[i]!))
    }
    expect(names.filter((n) => n.endsWith(".part"))).toEqual([])
  })

  it("a raw upload spools into the documents directory: its file is the spool renamed; a client that leaves takes its spool with it", async () => {
    const taskId = await newTask()
    const spools = () => stored().filter((n) => n.endsWith(".spool"))
    const send = (size: number) => {
      const req = httpRequest(`${service.url}/v1/tasks/${taskId}/files/raw?source=s&fileName=s.pdf`, {
        method: "POST",
        headers: { "x-svc-upload": "raw", "content-type": "application/pdf", "content-length": String(size) }
      })
      const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
        req.on("response", (res) => {
          let text = ""
          res.on("data", (d) => (text += d))
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text === "" ? undefined : JSON.parse(text) }))
        })
        req.on("error", reject)
      })
      return { req, answer }
    }
    const bytes = randomBytes(3 * MiB)
    const { req, answer } = send(bytes.length)
    req.write(bytes.subarray(0, MiB))
    await until("a spool in the documents directory", () => spools().length === 1)
    const inode = statSync(join(docsDir, spools()[0]!)).ino
    req.end(bytes.subarray(MiB))
    const res = await answer
    expect(res.status).toBe(201)
    expect(statSync(join(docsDir, res.body.documentRef)).ino).toBe(inode)
    expect(spools()).toEqual([])
    expect(sha((await download(res.body.downloadUrl)).bytes)).toBe(sha(bytes))
    // Mid-body, the client leaves: the spool goes with the request.
    const left = send(bytes.length)
    left.answer.catch(() => {})
    left.req.write(bytes.subarray(0, MiB))
    await until("a spool in the documents directory", () => spools().length === 1)
    left.req.destroy()
    await until("the spool removed", () => spools().length === 0)
  })

  it("a document whose file is gone or cut short is a logged 503, never a 500 or a short body", async () => {
    const taskId = await newTask()
    const gone = await raw(taskId, randomBytes(2 * MiB))
    const cut = await raw(taskId, randomBytes(2 * MiB))
    unlinkSync(join(docsDir, gone.body.documentRef))
    truncateSync(join(docsDir, cut.body.documentRef), MiB)
    for (const ref of [gone.body.documentRef, cut.body.documentRef]) {
      const res = await http("GET", `${service.url}/v1/tasks/${taskId}/files/${ref}/download`)
      expect(res.status, res.text).toBe(503)
      expect(res.body.message).toBe("The workspace store is unavailable; try again")
      await until(`the log names ${ref}`, () => service.output().includes(`reading document ${ref}`))
    }
  })

  it("a file that cannot be written is a logged 503 and stores nothing; small files are still stored", async () => {
    const taskId = await newTask()
    const saved = `${docsDir}.saved`
    renameSync(docsDir, saved)
    writeFileSync(docsDir, "not a directory")
    try {
      const big = await raw(taskId, randomBytes(2 * MiB))
      expect(big.status, big.text).toBe(503)
      expect(big.body.message).toBe("The upload could not be stored now; try again")
      await until("the log names the failed write", () => /writing document \S+ to \S+ failed: (ENOTDIR|EEXIST)/.test(service.output()))
      const small = await raw(taskId, randomBytes(1000))
      expect(small.status, small.text).toBe(201)
      const list = (await http("GET", `${service.url}/v1/tasks/${taskId}/files`)).body as Array<{ id: string }>
      expect(list.map((d) => d.id)).toEqual([small.body.documentRef])
    } finally {
      unlinkSync(docsDir)
      renameSync(saved, docsDir)
    }
  })

  it("after a restart the files still download; leftovers of a crash older than an hour are swept, younger ones kept", async () => {
    const hoursAgo = (Date.now() - 2 * 60 * 60_000) / 1000
    const oldPart = `${randomUUID()}.part`
    const oldOrphan = randomUUID()
    const youngOrphan = randomUUID()
    for (const name of [oldPart, oldOrphan, youngOrphan]) writeFileSync(join(docsDir, name), "left over")
    utimesSync(join(docsDir, oldPart), hoursAgo, hoursAgo)
    utimesSync(join(docsDir, oldOrphan), hoursAgo, hoursAgo)
    // A real document's file just as old stays.
    utimesSync(join(docsDir, kept[0]!.ref), hoursAgo, hoursAgo)
    await service.stop()
    service = await start()
    await until("the sweep", () => !existsSync(join(docsDir, oldPart)) && !existsSync(join(docsDir, oldOrphan)))
    expect(existsSync(join(docsDir, youngOrphan))).toBe(true)
    for (const k of kept) {
      const got = await download(k.url)
      expect(got.status).toBe(200)
      expect(sha(got.bytes)).toBe(k.sha)
    }
  })
})

describe("an older database", { timeout: 60_000 }, () => {
  it("its chunk-backed documents still download", async () => {
    const old = mkdtempSync(join(tmpdir(), "docfiles-old-"))
    const file = join(old, "workspace.db")
    const db = createClient({ url: pathToFileURL(file).href })
    await db.executeMultiple(readFileSync(new URL("../timeline/fixtures/release-970bdf8.sql", import.meta.url), "utf8"))
    db.close()
    const gw = await startBuilt({ SVC_DATABASE_URL: pathToFileURL(file).href, SVC_TENANT_SLUG: "acme", SVC_ADMIN_PORT: "off" })
    try {
      const list = await http("GET", `${gw.url}/v1/tasks/694ebd37-72d4-4ae6-b944-eb027435cd70/files`)
      expect(list.status, list.text).toBe(200)
      const res = await fetch(`${gw.url}${list.body[0].downloadUrl}`)
      expect(res.status).toBe(200)
      expect(await res.text()).toBe("Blue Bottle 182.40 USD\n")
      expect(existsSync(`${file}.documents`)).toBe(false)
    } finally {
      await gw.stop()
      rmSync(old, { recursive: true, force: true })
    }
  })
})
