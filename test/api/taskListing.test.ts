/**
 * Opt-in filtering and paging of GET /v1/entities/:entityId/tasks, on the built
 * process with its SQLite store (the filter runs as SQL there): without parameters the spec's
 * answer, unchanged and without a cursor header; with them, the pages read by following
 * x-next-cursor put together exactly the tasks of the unfiltered list the filter keeps, in its
 * order, for any combination of filters and page sizes (fast-check); bad values are a 400
 * naming the parameter.
 */
import fc from "fast-check"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as Effect from "effect/Effect"
import { createGatewayClient, makeGatewayClient, nextTaskCursor } from "../../src/client/index.js"
import { http, type RunningService, startBuilt } from "../support/process.js"

const ADMIN_TOKEN = "task-listing-admin-token-0123456789"

let dir: string
let gw: RunningService
let entity: string
let otherEntity: string
let otherTask: string
/** The unfiltered answer, as the spec describes it. */
let all: ReadonlyArray<{ id: string; status: string; awaiting?: string }>

const list = (query: string, entityId = entity) => http("GET", `${gw.url}/v1/entities/${entityId}/tasks${query}`)

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "task-listing-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_ADMIN_TOKEN: ADMIN_TOKEN })
  const entities = (await http("GET", `${gw.url}/v1/entities`)).body
  entity = entities.find((e: { slug: string }) => e.slug === "acme-us").id
  otherEntity = entities.find((e: { slug: string }) => e.slug !== "acme-us").id
  // More tasks, some moved on: FILE_UPLOAD (new), FAILED (rejected), beside the demo's TABLE_REVIEW,
  // COMPLETED and runbook-less ones.
  for (let i = 0; i < 14; i++) {
    const created = await http("POST", `${gw.url}/v1/entities/${entity}/tasks`, {
      workflowId: "expense-review",
      context: { period: "2026-12" }
    })
    expect(created.status, created.text).toBe(201)
    if (i % 3 === 0) {
      const rejected = await http("POST", `${gw.url}/v1/tasks/${created.body.id}/action`, { type: "rejected" })
      expect(rejected.status, rejected.text).toBe(200)
    }
  }
  const other = await http("POST", `${gw.url}/v1/entities/${otherEntity}/tasks`, {
    workflowId: "expense-review",
    context: { period: "2026-12" }
  })
  otherTask = other.body.id
  const answer = await list("")
  expect(answer.status).toBe(200)
  all = answer.body
}, 120_000)

afterAll(async () => {
  await gw?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** Every page from the first, following x-next-cursor; the pages' sizes too. */
const readAll = async (params: Record<string, string>) => {
  const pages: Array<ReadonlyArray<{ id: string }>> = []
  let cursor: string | null = null
  for (let n = 0; n < 200; n++) {
    const query = new URLSearchParams({ ...params, ...(cursor !== null ? { cursor } : {}) })
    const answer = await list(`?${query}`)
    expect(answer.status, answer.text).toBe(200)
    pages.push(answer.body)
    cursor = answer.headers.get("x-next-cursor")
    if (cursor === null) return pages
  }
  throw new Error("the cursor never ended")
}

describe("GET /v1/entities/:entityId/tasks, filtered and paged", () => {
  it("without parameters: every task, the spec's array, no cursor header", async () => {
    const answer = await list("")
    expect(answer.headers.get("x-next-cursor")).toBeNull()
    expect(all.length).toBe(18)
    expect(new Set(all.map((t) => t.status))).toEqual(new Set(["IN_PROGRESS", "COMPLETED", "FAILED"]))
    expect(new Set(all.map((t) => t.awaiting))).toEqual(new Set([undefined, "FILE_UPLOAD", "TABLE_REVIEW"]))
  })

  it("any filter and page size: the pages put together are the unfiltered list's matching tasks, in order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          status: fc.option(fc.constantFrom("IN_PROGRESS", "COMPLETED", "FAILED"), { nil: undefined }),
          awaiting: fc.option(fc.constantFrom("FILE_UPLOAD", "TABLE_REVIEW", "APPROVAL"), { nil: undefined }),
          limit: fc.option(fc.integer({ min: 1, max: 20 }), { nil: undefined })
        }),
        async ({ awaiting, limit, status }) => {
          const params: Record<string, string> = {}
          if (status !== undefined) params.status = status
          if (awaiting !== undefined) params.awaiting = awaiting
          if (limit !== undefined) params.limit = String(limit)
          const pages = await readAll(params)
          const want = all.filter((t) => (status === undefined || t.status === status) && (awaiting === undefined || t.awaiting === awaiting))
          expect(pages.flat()).toEqual(want)
          if (limit === undefined) expect(pages.length).toBe(1)
          else {
            for (const page of pages) expect(page.length).toBeLessThanOrEqual(limit)
            // Every page but the last is full: the filter runs in the store, not after it.
            for (const page of pages.slice(0, -1)) expect(page.length).toBe(limit)
          }
        }
      ),
      { numRuns: 40 }
    )
  }, 120_000)

  it("a cursor survives tasks added after it was given", async () => {
    const first = await list("?limit=2")
    const cursor = first.headers.get("x-next-cursor")!
    const created = await http("POST", `${gw.url}/v1/entities/${entity}/tasks`, { workflowId: "expense-review", context: { period: "2027-01" } })
    const rest = await readAll({ cursor, limit: "5" })
    const now = (await list("")).body as ReadonlyArray<{ id: string }>
    expect([...first.body, ...rest.flat()].map((t: { id: string }) => t.id)).toEqual(now.map((t) => t.id))
    expect(now.at(-1)!.id).toBe(created.body.id)
    all = now as typeof all
  }, 60_000)

  it("bad values are a 400 naming the parameter, in the error shape", async () => {
    const cursorOfOtherEntity = Buffer.from(`t:${otherTask}`).toString("base64url")
    const cases: ReadonlyArray<readonly [string, string]> = [
      ["?status=DONE", "status"],
      ["?status=in_progress", "status"],
      ["?status=", "status"],
      ["?awaiting=FILE%20UPLOAD", "awaiting"],
      ["?awaiting=", "awaiting"],
      ["?limit=0", "limit"],
      ["?limit=501", "limit"],
      ["?limit=abc", "limit"],
      ["?limit=1.5", "limit"],
      ["?limit=-1", "limit"],
      ["?limit=1e2", "limit"],
      ["?cursor=", "cursor"],
      ["?cursor=not%20a%20cursor", "cursor"],
      ["?cursor=dDpub3QtYS11dWlk", "cursor"],
      [`?cursor=${cursorOfOtherEntity}`, "cursor"],
      [`?cursor=${cursorOfOtherEntity}=`, "cursor"]
    ]
    for (const [query, param] of cases) {
      const answer = await list(query)
      expect(answer.status, `${query}: ${answer.text}`).toBe(400)
      expect(answer.body, query).toEqual({ statusCode: 400, error: "Bad Request", message: expect.stringMatching(new RegExp(`^${param}\\b`)) })
    }
  }, 60_000)

  it("the typed client lists as before without parameters, and pages with them (cursor from the response)", async () => {
    const promised = await createGatewayClient(gw.url).entities.listTasks({ path: { entityId: entity } })
    expect(promised).toEqual((await list("")).body)
    const ids = await Effect.runPromise(
      Effect.gen(function*() {
        const client = yield* makeGatewayClient(gw.url)
        const seen: Array<string> = []
        let cursor: string | undefined
        do {
          const [tasks, response] = yield* client.entities.listTasks({
            path: { entityId: entity },
            urlParams: { status: "IN_PROGRESS", limit: 4, ...(cursor !== undefined ? { cursor } : {}) },
            withResponse: true
          })
          seen.push(...tasks.map((t) => t.id))
          cursor = nextTaskCursor(response)
        } while (cursor !== undefined)
        return seen
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
    expect(ids).toEqual(promised.filter((t) => t.status === "IN_PROGRESS").map((t) => t.id))
  }, 60_000)

  it("a gateway on a remote workspace (SVC_WORKSPACE_URL) filters and pages the same", async () => {
    const remote = await startBuilt({ SVC_WORKSPACE_URL: gw.adminUrl, SVC_WORKSPACE_TOKEN: ADMIN_TOKEN, SVC_TENANT_SLUG: "acme" })
    try {
      const now = (await list("")).body as ReadonlyArray<{ id: string; status: string; awaiting?: string }>
      for (const params of [{ status: "FAILED", limit: "2" }, { awaiting: "FILE_UPLOAD", limit: "3" }, { status: "IN_PROGRESS", awaiting: "TABLE_REVIEW" }]) {
        const seen: Array<{ id: string }> = []
        let cursor: string | null = null
        do {
          const query = new URLSearchParams({ ...params, ...(cursor !== null ? { cursor } : {}) })
          const answer = await http("GET", `${remote.url}/v1/entities/${entity}/tasks?${query}`)
          expect(answer.status, answer.text).toBe(200)
          seen.push(...answer.body)
          cursor = answer.headers.get("x-next-cursor")
        } while (cursor !== null)
        const p = params as { status?: string; awaiting?: string }
        expect(seen, JSON.stringify(params)).toEqual(
          now.filter((t) => (p.status === undefined || t.status === p.status) && (p.awaiting === undefined || t.awaiting === p.awaiting))
        )
      }
      const foreign = Buffer.from(`t:${otherTask}`).toString("base64url")
      const refused = await http("GET", `${remote.url}/v1/entities/${entity}/tasks?limit=1&cursor=${foreign}`)
      expect(refused.status, refused.text).toBe(400)
      expect(refused.body.message).toMatch(/^cursor: /)
    } finally {
      await remote.stop()
    }
  }, 60_000)
})
