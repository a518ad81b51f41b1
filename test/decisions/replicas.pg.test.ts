/**
 * Across replicas: two gateway processes as `npm start` runs them, on one
 * PostgreSQL database. Identical approvals written together, half to each replica, are one
 * decision; an approval and a rejection written together to different replicas: one applies, the
 * other is a 409. The replicas compare the request's arrival with when the step became current,
 * inside the transaction that locks the task's row; a replica that reads its share late (a loaded
 * machine deschedules it) still counts it as written together.
 */
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { type RawRequest, sendTogether } from "../support/together.js"

const FIXTURE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"
const ROUNDS = 10

const replicas: Array<RunningService> = []

beforeAll(async () => {
  const db = await testDatabase("decisions", { empty: true })
  replicas.push(...await Promise.all([0, 1].map(() =>
    startBuilt({ SVC_DATABASE_URL: db, SVC_SEED_FILE: FIXTURE, SVC_TENANT_SLUG: "acme", SVC_DB_POOL_SIZE: "6" })
  )))
}, 120_000)

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()))
})

const newPaymentRun = async () => {
  const created = await http("POST", `${replicas[0]!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
  expect(created.status).toBe(201)
  return created.body.id as string
}

const stateOf = async (taskId: string) => {
  const ui = await http("GET", `${replicas[1]!.url}/v1/tasks/${taskId}/ui`)
  const snapshots = await http("GET", `${replicas[1]!.url}/v1/tasks/${taskId}/snapshots`)
  return { status: ui.body.task.status as string, step: (ui.body.step?.id ?? null) as string | null, decided: Object.keys(snapshots.body) }
}

const action = (taskId: string, type: "approved" | "rejected"): RawRequest => ({
  method: "POST",
  path: `/v1/tasks/${taskId}/action`,
  body: { type }
})

/** Each request to its replica (alternating), all written in one tick (one connection per request). */
const acrossReplicas = (requests: ReadonlyArray<RawRequest>, around?: Parameters<typeof sendTogether>[2]) =>
  sendTogether(replicas[0]!.url, requests.map((r, j) => ({ ...r, url: replicas[j % 2]!.url })), around)

/**
 * The second replica stopped (SIGSTOP) while the requests are written and resumed `lateMs`
 * later: it reads and stamps its share that late, as a replica the scheduler left waiting does
 * (two processes stamped one moment's writes up to 90 ms apart at p99.9 under the test suite).
 * 40 ms: a replica waiting 3 ms moved the task 20-40 ms after its arrival (a 20 ms stop passed
 * with 3 ms, 40 ms failed); waiting 100 ms it moves it 120 ms or more after, so the resume may
 * come 80 ms late on a loaded machine and the test still holds.
 */
const secondReplicaLate = (lateMs: number) => ({
  beforeWrite: () => replicas[1]!.kill("SIGSTOP"),
  afterWrite: () => setTimeout(() => replicas[1]!.kill("SIGCONT"), lateMs)
})

describe("decisions written together to two replicas on PostgreSQL (built processes)", () => {
  for (const n of [2, 20]) {
    it(`${n} identical approvals, half to each replica: all {ok:true}, one step (${ROUNDS} rounds)`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const taskId = await newPaymentRun()
        const answers = await acrossReplicas(Array.from({ length: n }, () => action(taskId, "approved")))
        expect(answers.map((a) => `${a.status} ${a.text}`), `round ${round}`).toEqual(Array.from({ length: n }, () => `200 {"ok":true}`))
        expect(await stateOf(taskId), `round ${round}`).toEqual({
          status: "IN_PROGRESS",
          step: "cfo_approval",
          decided: ["controller_approval"]
        })
      }
    }, 180_000)
  }

  it(`20 identical approvals, the second replica reading its half 40 ms late: all {ok:true}, one step (3 rounds)`, async () => {
    for (let round = 0; round < 3; round++) {
      const taskId = await newPaymentRun()
      const answers = await acrossReplicas(Array.from({ length: 20 }, () => action(taskId, "approved")), secondReplicaLate(40))
      expect(answers.map((a) => `${a.status} ${a.text}`), `round ${round}`).toEqual(Array.from({ length: 20 }, () => `200 {"ok":true}`))
      expect(await stateOf(taskId), `round ${round}`).toEqual({ status: "IN_PROGRESS", step: "cfo_approval", decided: ["controller_approval"] })
    }
  }, 60_000)

  it(`an approval and a rejection to different replicas: one applies, the other 409 (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const taskId = await newPaymentRun()
      const answers = await acrossReplicas([action(taskId, "approved"), action(taskId, "rejected")])
      expect(answers.map((a) => a.status).sort(), `round ${round}: ${answers.map((a) => a.text)}`).toEqual([200, 409])
      const state = await stateOf(taskId)
      expect(state.decided).toEqual(["controller_approval"])
      expect(state.step === "cfo_approval" || state.status === "FAILED").toBe(true)
    }
  }, 180_000)
})
