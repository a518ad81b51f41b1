/**
 * Replicas compare a request's arrival, stamped by the replica that read it, with when the task's
 * step became current, stamped by the replica that moved it (src/lib/preciseClock.ts). Node
 * reads the wall clock for `performance.timeOrigin` at start, not quite when it reads the
 * monotonic clock: here that left processes 0.1-1.1 ms ahead of the system clock, once 7.8 ms.
 * A client's next decision, sent when the answer to its last came back, reaches the other
 * replica a millisecond or two after the move: with one replica's clock that far ahead, the
 * next decision was bound to the step already decided and swallowed as a duplicate (200).
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { http, type RunningService, startBuilt } from "../support/process.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
/** A start that read the wall clock 8 ms after the monotonic one (as seen once here). */
const TIME_ORIGIN_8MS_LATE = `data:text/javascript,Object.defineProperty(performance,"timeOrigin",{value:performance.timeOrigin+8})`

const replicas: Array<RunningService> = []

beforeAll(async () => {
  const db = await testDatabase("clockskew", { empty: true })
  const env = { SVC_DATABASE_URL: db, SVC_SEED_FILE: FIXTURE, SVC_TENANT_SLUG: "acme", SVC_DB_POOL_SIZE: "4" }
  replicas.push(...await Promise.all([startBuilt(env, ["--import", TIME_ORIGIN_8MS_LATE]), startBuilt(env)]))
}, 120_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()))
})

describe("replicas whose processes read the wall clock apart at start (built processes, PostgreSQL)", () => {
  it("one client's approvals, each sent when the last was answered, alternating replicas: each decides the next step", async () => {
    const seen: Array<string> = []
    for (let round = 0; round < 6; round++) {
      const created = await http("POST", `${replicas[0]!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
      expect(created.status).toBe(201)
      const taskId = created.body.id as string
      for (const r of [replicas[0]!, replicas[1]!]) {
        const answer = await http("POST", `${r.url}/v1/tasks/${taskId}/action`, { type: "approved" })
        expect(answer.status, answer.text).toBe(200)
      }
      const ui = await http("GET", `${replicas[1]!.url}/v1/tasks/${taskId}/ui`)
      seen.push(ui.body.step?.id ?? ui.body.task.status)
    }
    expect(seen).toEqual(Array.from({ length: 6 }, () => "upload_remittance"))
  }, 60_000)
})
