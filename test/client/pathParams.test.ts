/**
 * Every client of the gateway sends path parameters as one segment each: an id holding `/..`,
 * `?` or `#` reaches the server as that id (which names nothing), never as another route or
 * another task. Checked on the wire (a loopback server that records request targets) and on
 * the built gateway (a composite id with `/../<other task>` must not write to the other task).
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createGatewayClient,
  createRegistryClient,
  downloadFile,
  makeGatewayClient
} from "../../src/client/index.js"
import { http, type RunningService, startBuilt } from "../support/process.js"

const TASK_A = "694ebd37-72d4-4ae6-b944-eb027435cd70"
const TASK_B = "1f3a5c7e-9b2d-4f60-8a1c-3e5b7d9f1a20"
const DOC = "0b7c1a52-1d9e-4a8f-9d6c-2e4f6a8b0c1d"
const ROW = "0349944d-fb03-40cf-a73a-21b10c2a61e9"

/** Ids that pass the contract's TaskId pattern but hold characters that could re-route a URL. */
const ODD_IDS = [
  `${TASK_A}:s:x/../${TASK_B}`,
  `${TASK_A}:s:x/../../../health`,
  `${TASK_A}:s:x?afterSeq=1`,
  `${TASK_A}:s:x#frag`,
  `${TASK_A}:s:100%25`,
  `${TASK_A}:s:a b%2F..%2F${TASK_B}`
]

describe("path parameters on the wire", () => {
  let server: Server
  let base = ""
  const targets: Array<string> = []
  beforeAll(async () => {
    server = createServer((req, res) => {
      targets.push(req.url ?? "")
      req.resume()
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ statusCode: 404, message: "no such thing", error: "Not Found" }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  /** The segments of the last request target's path, decoded. */
  const lastSegments = () => {
    const target = targets.at(-1)!
    expect(target.includes("?"), target).toBe(false)
    return target.split("/").slice(1).map(decodeURIComponent)
  }

  it("the Promise client sends each odd task id as one segment", async () => {
    const gw = createGatewayClient(base)
    for (const id of ODD_IDS) {
      targets.length = 0
      await expect(gw.tasks.getUi({ path: { taskId: id } })).rejects.toMatchObject({ _tag: "NotFound" })
      expect(targets).toHaveLength(1)
      expect(lastSegments()).toEqual(["v1", "tasks", id, "ui"])
      await expect(gw.events.appendEvent({
        path: { taskId: id },
        headers: {},
        payload: { type: "reasoning.delta", source: "worker", seq: 1, payload: { text: "x" } }
      })).rejects.toMatchObject({ _tag: "NotFound" })
      expect(lastSegments()).toEqual(["v1", "tasks", id, "events"])
    }
  })

  it("the Effect client, the download helper and the registry client do the same", async () => {
    const id = ODD_IDS[0]!
    /** Runs a call the recording server answers 404: it must have reached the server. */
    const run = async <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient>) => {
      targets.length = 0
      await Effect.runPromise(Effect.result(Effect.provide(effect, FetchHttpClient.layer)))
      expect(targets).toHaveLength(1)
    }
    await run(Effect.flatMap(makeGatewayClient(base), (gw) => gw.files.listFiles({ path: { taskId: id }, urlParams: {} })))
    expect(lastSegments()).toEqual(["v1", "tasks", id, "files"])
    await run(downloadFile(base, { taskId: id, documentRef: DOC }))
    expect(lastSegments()).toEqual(["v1", "tasks", id, "files", DOC, "download"])
    await run(Effect.flatMap(makeGatewayClient(base), (gw) => gw.subledgers.rejectRow({ path: { ledger: "x/../expenses", rowId: ROW } })))
    expect(lastSegments()).toEqual(["v1", "subledgers", "x/../expenses", ROW, "reject"])
    const registry = createRegistryClient(base)
    targets.length = 0
    await registry.registry.getAgent({ path: { id: "a/../../tenants/t" } }).catch(() => undefined)
    expect(targets).toHaveLength(1)
    expect(lastSegments()).toEqual(["workspace", "registry", "agents", "a/../../tenants/t"])
  })

  it("a parameter that is `.` or `..` (which no URL can carry) is refused before sending", async () => {
    const gw = createGatewayClient(base)
    targets.length = 0
    await expect(gw.subledgers.rejectRow({ path: { ledger: "..", rowId: ROW } })).rejects.toMatchObject({ _tag: "SchemaError" })
    await expect(gw.subledgers.rejectRow({ path: { ledger: ".", rowId: ROW } })).rejects.toMatchObject({ _tag: "SchemaError" })
    expect(targets).toEqual([])
  })
})

describe("a composite id with /../ against the built gateway", () => {
  let dir = ""
  let gw: RunningService | undefined
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "client-paths-"))
    gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}` })
  }, 60_000)
  afterAll(async () => {
    await gw?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  // The gateway may answer for the odd id itself (a child stream of A, or A's page): what it
  // must never do is answer with, or write to, task B.
  it("never reads or writes the other task", async () => {
    const client = createGatewayClient(gw!.url)
    const before = await http("GET", `${gw!.url}/v1/tasks/${TASK_B}/events`)
    expect(before.status).toBe(200)
    const odd = `${TASK_A}:s:x/../${TASK_B}`
    const read = await client.tasks.getUi({ path: { taskId: odd } }).then((ui) => ({ ok: ui }), (e) => ({ error: e }))
    expect((read as { ok?: { task?: { id?: string } } }).ok?.task?.id).not.toBe(TASK_B)
    const write = await client.events.appendEvent({
      path: { taskId: odd },
      headers: {},
      payload: { type: "reasoning.delta", source: "worker", seq: 424242, payload: { text: "not for B" } }
    }).then((r) => ({ ok: r }), (e) => ({ error: e }))
    expect((write as { ok?: { event?: { taskId?: string } } }).ok?.event?.taskId).not.toBe(TASK_B)
    const after = await http("GET", `${gw!.url}/v1/tasks/${TASK_B}/events`)
    expect(after.body.events.map((e: { seq: number }) => e.seq)).not.toContain(424242)
    expect(after.body.events).toEqual(before.body.events)
  })
})
