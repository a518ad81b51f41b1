/**
 * The benchmark's world: the test fixture plus one entity with 50 open tasks (S2), and the
 * request bodies of S3 (1 MiB file as base64 JSON) and S5 (1,000 events of about 2 KB).
 * The gateway and every peer load the same fixture file.
 */
import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"

export const TENANT_ID = "ded92d4b-f408-46e5-8cce-284491efe71d"
/** acme-uk: no tasks in the example fixture; the bench gives it 50 open ones. */
export const BENCH_ENTITY_ID = "3acc7ce9-d0bf-431a-9528-aa340456a628"
/** An open task of the tenant: uploads and data ingest go to it. */
export const BENCH_TASK_ID = "694ebd37-72d4-4ae6-b944-eb027435cd70"
export const TASK_COUNT = 50
export const LOOKUP_MS = 5

const steps = ["upload_receipts", "review_expenses", "sign_off"] as const

const taskId = (i: number) => `00000000-0000-4000-8000-${(i + 1).toString(16).padStart(12, "0")}`

/** The example fixture with 50 IN_PROGRESS tasks on BENCH_ENTITY_ID (every one needs a next-step lookup). */
export const benchFixture = (): Record<string, unknown> => {
  const example = JSON.parse(
    readFileSync(new URL("../../test/fixtures/example.json", import.meta.url), "utf8")
  ) as { tasks: Array<unknown> } & Record<string, unknown>
  const tasks = Array.from({ length: TASK_COUNT }, (_, i) => ({
    id: taskId(i),
    tenantId: TENANT_ID,
    entityId: BENCH_ENTITY_ID,
    workflowId: "expense-review",
    title: `Expense review 2026-${String((i % 12) + 1).padStart(2, "0")} #${i + 1}`,
    status: "IN_PROGRESS",
    priority: "HIGH",
    createdAt: new Date(Date.UTC(2026, 10, 1, 9, i)).toISOString(),
    currentStep: steps[i % steps.length]
  }))
  return { ...example, tasks: [...example.tasks, ...tasks] }
}

export const MiB = 1024 * 1024

/** S3: `{source, fileName, data}` with 1 MiB of random bytes as base64. */
export const uploadBody = (bytes = MiB): string =>
  JSON.stringify({ source: "bench", fileName: "bench.bin", data: randomBytes(bytes).toString("base64") })

export const EVENT_COUNT = 1000

/** S5: 1,000 events whose `data` is about 2 KB of JSON each. */
export const ingestBody = (): string => {
  const filler = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(60).slice(0, 1900)
  const events = Array.from({ length: EVENT_COUNT }, (_, i) => ({
    data: { n: i, merchant: `Merchant ${i % 97}`, amount: (i * 7.31) % 1000, currency: "USD", note: filler },
    sourceRef: { line: i }
  }))
  return JSON.stringify({ kind: "expense", events })
}

// ---------------------------------------------------------------------------------------------
// The scaling sweep (bench/run.ts S7): how the cost of a list grows with the rows behind it.

export const SWEEP_TASKS_PER_ENTITY = [10, 100, 1000] as const
export const SWEEP_EVENTS_PER_TASK = [100, 10_000] as const
export const SWEEP_DOCUMENTS_PER_TASK = [20, 200, 2000] as const

const sweepId = (kind: number, n: number, i = 0) =>
  `${kind.toString(16).padStart(8, "0")}-0000-4000-9000-${(n * 100_000 + i).toString(16).padStart(12, "0")}`
/** The entity holding `n` open tasks. */
export const sweepEntityId = (n: number) => sweepId(1, n)
/** The task holding `n` events. */
export const sweepEventTaskId = (n: number) => sweepId(3, n)
/** The task holding `n` documents. */
export const sweepDocumentTaskId = (n: number) => sweepId(4, n)

/**
 * The bench fixture plus: one entity per tasks-per-entity size (that many IN_PROGRESS tasks, each
 * needing its next step), one task per events-per-task size, one per documents-per-task size
 * (documents of a few bytes: the list's cost, not the bytes', is measured).
 */
export const sweepFixture = (): Record<string, unknown> => {
  const base = benchFixture() as { entities: Array<unknown>; tasks: Array<unknown>; events: Array<unknown>; documents: Array<unknown> } & Record<string, unknown>
  const task = (id: string, entityId: string, i: number) => ({
    id,
    tenantId: TENANT_ID,
    entityId,
    workflowId: "expense-review",
    title: `Sweep task #${i + 1}`,
    status: "IN_PROGRESS",
    priority: "MEDIUM",
    createdAt: new Date(Date.UTC(2026, 10, 1, 9, 0, i)).toISOString(),
    currentStep: steps[i % steps.length]
  })
  const entities = SWEEP_TASKS_PER_ENTITY.map((n) => ({ id: sweepEntityId(n), tenantId: TENANT_ID, slug: `sweep-${n}`, name: `Sweep ${n}` }))
  const tasks = SWEEP_TASKS_PER_ENTITY.flatMap((n) => Array.from({ length: n }, (_, i) => task(sweepId(2, n, i), sweepEntityId(n), i)))
  const holder = sweepEntityId(SWEEP_TASKS_PER_ENTITY[0])
  const eventTasks = SWEEP_EVENTS_PER_TASK.map((n, i) => task(sweepEventTaskId(n), holder, i))
  const documentTasks = SWEEP_DOCUMENTS_PER_TASK.map((n, i) => task(sweepDocumentTaskId(n), holder, i))
  const events = SWEEP_EVENTS_PER_TASK.flatMap((n) =>
    Array.from({ length: n }, (_, i) => ({
      taskId: sweepEventTaskId(n),
      type: "reasoning.delta",
      source: "worker",
      seq: i + 1,
      payload: { text: `step ${i + 1} of the agent's reasoning, about sixty bytes long` }
    })))
  const documents = SWEEP_DOCUMENTS_PER_TASK.flatMap((n) =>
    Array.from({ length: n }, (_, i) => ({
      id: sweepId(5, n, i),
      tenantId: TENANT_ID,
      taskId: sweepDocumentTaskId(n),
      source: "receipts",
      filename: `receipt-${i + 1}.txt`,
      contentType: "text/plain",
      uploadedAt: new Date(Date.UTC(2026, 10, 1, 9, 0, 0, i)).toISOString(),
      dataBase64: Buffer.from(`receipt ${i + 1}`).toString("base64")
    })))
  return {
    ...base,
    entities: [...base.entities, ...entities],
    tasks: [...base.tasks, ...tasks, ...eventTasks, ...documentTasks],
    events: [...base.events, ...events],
    documents: [...base.documents, ...documents]
  }
}
