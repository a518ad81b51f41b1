/**
 * A gateway on a workspace service (SVC_WORKSPACE_URL) gives a download's connection back as soon
 * as its answer is done, also when the body is never sent: a HEAD request (the server writes the
 * head only) and MCP read_file on a document over SVC_MCP_READ_MAX_BYTES (refused after the
 * download was opened). Such a body held its connection until the response object happened to be
 * garbage-collected; with SVC_WORKSPACE_MAX_CONNECTIONS=3 (one download connection) the next
 * download waited for it and answered 504 at its deadline. Likewise a reader that stops taking
 * bytes gives its connection up after SVC_WORKSPACE_TIMEOUT_MS; it held it for as long as it kept
 * its socket open (one client's 64 stalled downloads took every download connection of a
 * default gateway).
 *
 * Both processes built (dist/main.js): the store gateway's admin listener is the workspace service.
 */
import { randomBytes } from "node:crypto"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"

const TOKEN = "download-release-admin-token-0123456789"
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const DEADLINE_MS = 5_000
const ATTEMPT_MS = 2_000
/** Under SVC_MAX_BODY_BYTES (32 MiB). */
const BIG_BYTES = 30 * 1024 * 1024

let store: BuiltGateway
let gateway: RunningService
let downloadUrl: string
let taskId: string
let documentRef: string

beforeAll(async () => {
  store = await startBuiltGateway({ SVC_ADMIN_TOKEN: TOKEN })
  gateway = await startBuilt({
    SVC_WORKSPACE_URL: store.adminUrl,
    SVC_WORKSPACE_TOKEN: TOKEN,
    SVC_TENANT_SLUG: "acme",
    SVC_ADMIN_PORT: "off",
    // 3 connections: 1 for calls, 1 for downloads, 1 for the tenant lookup.
    SVC_WORKSPACE_MAX_CONNECTIONS: "3",
    SVC_WORKSPACE_TIMEOUT_MS: String(ATTEMPT_MS),
    SVC_REQUEST_DEADLINE_MS: String(DEADLINE_MS),
    SVC_MCP_READ_MAX_BYTES: "8"
  })
  const tasks = await (await fetch(`${gateway.url}/v1/entities/${ACME_US}/tasks`)).json() as Array<{ id: string }>
  taskId = tasks[0]!.id
  const upload = await fetch(`${gateway.url}/v1/tasks/${taskId}/files/raw?source=test&fileName=small.pdf`, {
    method: "POST",
    headers: { "x-svc-upload": "raw", "content-type": "application/pdf" },
    body: "%PDF-1.4 a small file"
  })
  expect(upload.status).toBe(201)
  const stored = await upload.json() as { downloadUrl: string; documentRef: string }
  downloadUrl = gateway.url + stored.downloadUrl
  documentRef = stored.documentRef
}, 60_000)

afterAll(async () => {
  await gateway?.stop()
  await store?.cleanup()
})

/** A GET of the download: its status, bytes and time. */
const download = async () => {
  const started = performance.now()
  const res = await fetch(downloadUrl)
  const body = await res.text()
  return { status: res.status, body, ms: performance.now() - started }
}

/** Three downloads, each right after `unsent` (an answer whose body is never sent): each 200 at once. */
const eachAfter = async (unsent: () => Promise<void>) => {
  const answers = []
  for (let i = 0; i < 3; i++) {
    await unsent()
    answers.push(await download())
  }
  for (const answer of answers) {
    expect(answer).toMatchObject({ status: 200, body: "%PDF-1.4 a small file" })
    expect(answer.ms).toBeLessThan(1_000)
  }
}

describe("a download whose body is never sent gives its connection back", { timeout: 60_000 }, () => {
  it("HEAD of a download: the next GET gets the one download connection at once", async () => {
    await eachAfter(async () => {
      const head = await fetch(downloadUrl, { method: "HEAD" })
      expect(head.status).toBe(200)
      expect(head.headers.get("content-length")).toBe("21")
    })
  })

  it("MCP read_file refusing a document over SVC_MCP_READ_MAX_BYTES: the next GET gets the connection at once", async () => {
    const created = await fetch(`${store.adminUrl}/workspace/registry/agents`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ kind: "claude", externalRef: "claude://download-release", name: "Reader", tenantSlug: "acme" })
    })
    expect(created.status).toBe(201)
    const { apiKey } = await created.json() as { apiKey: string }
    await eachAfter(async () => {
      const res = await fetch(`${gateway.url}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "read_file", arguments: { taskId, documentRef } }
        })
      })
      const answer = await res.json() as { result: { isError: boolean; _meta: { statusCode: number } } }
      expect(answer.result).toMatchObject({ isError: true, _meta: { statusCode: 413 } })
    })
  })

  it("a reader that stops taking bytes: its connection is given up after SVC_WORKSPACE_TIMEOUT_MS, the next download is served", async () => {
    // Larger than every buffer between the service and the stalled reader together (loopback
    // sockets take megabytes each way: 16 MiB fitted at times).
    const upload = await fetch(`${gateway.url}/v1/tasks/${taskId}/files/raw?source=test&fileName=big.pdf`, {
      method: "POST",
      headers: { "x-svc-upload": "raw", "content-type": "application/pdf" },
      body: randomBytes(BIG_BYTES)
    })
    expect(upload.status).toBe(201)
    const big = gateway.url + (await upload.json() as { downloadUrl: string }).downloadUrl
    let received = 0
    const stalled = await new Promise<http.ClientRequest>((resolve, reject) => {
      const req = http.get(big, { agent: false }, (res) => {
        expect(res.statusCode).toBe(200)
        res.once("data", (chunk: Buffer) => {
          received += chunk.length
          res.pause()
          resolve(req)
        })
      })
      req.on("error", reject)
    })
    try {
      // The stalled reader holds the one download connection until its bound has passed, then
      // the next download (which waits at most its deadline) gets it.
      const started = performance.now()
      const next = await download()
      expect(next).toMatchObject({ status: 200, body: "%PDF-1.4 a small file" })
      expect(next.ms).toBeLessThan(DEADLINE_MS)
      expect(performance.now() - started).toBeGreaterThanOrEqual(ATTEMPT_MS - 200)
      expect(received).toBeLessThan(BIG_BYTES)
      // The log is written in batches: the line may follow the answer by a few milliseconds.
      await expect.poll(() => gateway.output()).toContain(`the reader took nothing for ${ATTEMPT_MS} ms; its connection is given up`)
    } finally {
      stalled.destroy()
    }
  })
})
