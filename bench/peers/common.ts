/**
 * What every peer serves, written once so the peers differ only in their framework: the same
 * fixture in memory, the same 5 ms next-step lookup, the same store writes made directly with
 * @libsql/client on a database prepared like the gateway's, the same document file.
 *
 * Settings: PORT, BENCH_FIXTURE, BENCH_DB (file: url), BENCH_DOC_FILE, BENCH_DOC_ID,
 * BENCH_LOOKUP_MS, BENCH_MAX_BODY, BENCH_UPSTREAM_URL (S2's lists from the workspace service, as
 * the gateway reads them there, instead of the fixture and a timer), BENCH_PEER_IDS=v7 (S5's data
 * records keyed by time-ordered UUIDv7 as the gateway keys them, instead of the random v4 ids a
 * service written the usual way makes: bench/PROFILE.md compares both).
 */
import type { Client, InValue, Transaction } from "@libsql/client"
import mime from "mime"
import { randomUUID } from "node:crypto"
import { v7 } from "uuid"
import { existsSync, readFileSync, statSync } from "node:fs"
import * as http from "node:http"
import { setTimeout as sleep } from "node:timers/promises"

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback
  if (value === undefined) throw new Error(`${name} is not set`)
  return value
}

export const port = Number(env("PORT"))
export const maxBodyBytes = Number(env("BENCH_MAX_BODY", String(32 * 1024 * 1024)))
const lookupMs = Number(env("BENCH_LOOKUP_MS", "5"))
const recordId: () => string = env("BENCH_PEER_IDS", "v4") === "v7" ? () => v7() : randomUUID

interface Step { readonly id: string; readonly displayHint: { readonly component: string } }
interface Fixture {
  readonly tenants: ReadonlyArray<{ id: string; slug: string }>
  readonly entities: ReadonlyArray<{ id: string; tenantId: string }>
  readonly workflows: ReadonlyArray<{ id: string; runbook: { steps: ReadonlyArray<Step> } | null }>
  readonly tasks: ReadonlyArray<{
    id: string
    tenantId: string
    entityId: string
    workflowId: string
    title: string
    status: string
    priority: string
    createdAt: string
    currentStep: string | null
  }>
}

const fixture = JSON.parse(readFileSync(env("BENCH_FIXTURE"), "utf8")) as Fixture
const tenantId = fixture.tenants.find((t) => t.slug === "acme")!.id
const entities = new Map(fixture.entities.map((e) => [e.id, e]))
const workflows = new Map(fixture.workflows.map((w) => [w.id, w]))
const tasks = new Map(fixture.tasks.map((t) => [t.id, t]))

export const health = { status: "ok" } as const

/** The upstream next-step lookup: 5 ms away, then the current step's component. */
const awaitingOf = async (taskId: string): Promise<string | undefined> => {
  await sleep(lookupMs)
  const task = tasks.get(taskId)
  const step = task === undefined ? undefined : workflows.get(task.workflowId)?.runbook?.steps.find((s) => s.id === task.currentStep)
  return step?.displayHint.component
}

export interface BoardTask {
  readonly id: string
  readonly entityId: string
  readonly workflowId: string
  readonly title: string
  readonly status: string
  readonly priority: string
  readonly createdAt: string
  readonly awaiting?: string
}

/**
 * S2 over the workspace service (BENCH_UPSTREAM_URL): what a gateway of this framework in front
 * of it would do, with the gateway's upstream calls: one task board call (the entity's check, its
 * tasks, each one's `awaiting`) on a keep-alive connection, its JSON parsed, the summaries mapped
 * from it. Node's own HTTP client, the lightest a peer could pick.
 */
const upstream = process.env.BENCH_UPSTREAM_URL ? new URL(process.env.BENCH_UPSTREAM_URL) : undefined
const upstreamAgent = new http.Agent({ keepAlive: true })
const boardOf = (entityId: string) =>
  new Promise<ReadonlyArray<BoardTask> | undefined>((resolve, reject) => {
    http.get({
      host: upstream!.hostname,
      port: upstream!.port,
      path: `/workspace/tenants/${tenantId}/entities/${encodeURIComponent(entityId)}/board`,
      agent: upstreamAgent
    }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        if (res.statusCode === 404) resolve(undefined)
        else if (res.statusCode !== 200) reject(new Error(`workspace answered ${res.statusCode}`))
        else resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as ReadonlyArray<BoardTask>)
      })
      res.on("error", reject)
    }).on("error", reject)
  })

/** A board's tasks as the list's summaries (bench/experiments/s2-floor-server.ts maps them too). */
export const summariesOf = (board: ReadonlyArray<BoardTask>) =>
  board.map((t) => ({
    id: t.id,
    title: t.title,
    status: t.status,
    priority: t.priority,
    ...(t.awaiting !== undefined && t.status !== "COMPLETED" && t.status !== "FAILED" ? { awaiting: t.awaiting } : {}),
    entityId: t.entityId,
    workflowId: t.workflowId,
    createdAt: t.createdAt
  }))

const listTasksUpstream = async (entityId: string) => {
  const board = await boardOf(entityId)
  return board === undefined ? undefined : summariesOf(board)
}

/** S2: the entity's task summaries, every open task's next step looked up in parallel; undefined: 404. */
export const listTasks = async (entityId: string) => {
  if (upstream !== undefined) return listTasksUpstream(entityId)
  const entity = entities.get(entityId)
  if (entity === undefined || entity.tenantId !== tenantId) return undefined
  const mine = [...tasks.values()].filter((t) => t.tenantId === tenantId && t.entityId === entityId)
  return Promise.all(mine.map(async (t) => {
    const awaiting = t.status === "COMPLETED" || t.status === "FAILED" ? undefined : await awaitingOf(t.id).catch(() => undefined)
    return {
      id: t.id,
      title: t.title,
      status: t.status,
      priority: t.priority,
      ...(awaiting !== undefined ? { awaiting } : {}),
      entityId: t.entityId,
      workflowId: t.workflowId,
      createdAt: t.createdAt
    }
  }))
}

/** The driver is loaded only when a database is configured (S6 measures a peer without one). */
const db: Promise<Client> | undefined = process.env.BENCH_DB !== undefined
  ? import("@libsql/client").then(({ createClient }) => createClient({ url: process.env.BENCH_DB! }))
  : undefined

/**
 * One write transaction at a time, as the gateway's SQLite layer (src/workspace/embedded/libsql.ts)
 * does with its semaphore: SQLite has one writer, and concurrent transactions on separate connections
 * fail with SQLITE_BUSY instead of waiting.
 */
let queue: Promise<unknown> = Promise.resolve()
const writeTransaction = <A>(f: (tx: Transaction) => Promise<A>): Promise<A> => {
  if (db === undefined) return Promise.reject(new Error("BENCH_DB is not set"))
  const run = queue.then(async () => {
    const client = await db
    // Wait for a lock another process holds (the gateway retries SQLITE_BUSY the same way).
    await client.execute("PRAGMA busy_timeout = 5000")
    const tx = await client.transaction("write")
    try {
      const result = await f(tx)
      await tx.commit()
      return result
    } finally {
      tx.close()
    }
  })
  queue = run.catch(() => undefined)
  return run
}

const CHUNK_BYTES = 256 * 1024

export interface UploadBody {
  readonly source: string
  readonly data: string
  readonly fileName?: string
  readonly contentType?: string
}

/** S3: the decoded bytes stored as a document of the task in one transaction; undefined: 404. */
export const upload = async (taskId: string, body: UploadBody) => {
  const bytes = Buffer.from(body.data, "base64")
  const filename = body.fileName ?? `${body.source}-${new Date().toISOString().replace(/[:.]/g, "-")}`
  const contentType = body.contentType ?? mime.getType(filename) ?? "application/octet-stream"
  return writeTransaction(async (tx) => {
    const task = await tx.execute({ sql: "SELECT id FROM tasks WHERE id = ? AND tenant_id = ?", args: [taskId, tenantId] })
    if (task.rows.length === 0) return undefined
    const now = new Date()
    const id = randomUUID()
    const uploadedAt = now.toISOString()
    await tx.execute({
      sql: "INSERT INTO documents (id, tenant_id, task_id, source, filename, content_type, size_bytes, uploaded_at, uploaded_ms, period, schema_slug) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
      args: [id, tenantId, taskId, body.source, filename, contentType, bytes.length, uploadedAt, now.getTime()]
    })
    for (let idx = 0; idx * CHUNK_BYTES < bytes.length; idx++) {
      const start = idx * CHUNK_BYTES
      await tx.execute({
        sql: "INSERT INTO document_chunks (document_id, idx, data) VALUES (?, ?, ?)",
        args: [id, idx, bytes.subarray(start, Math.min(start + CHUNK_BYTES, bytes.length))]
      })
    }
    return {
      documentRef: id,
      taskId,
      source: body.source,
      filename,
      contentType,
      sizeBytes: bytes.length,
      uploadedAt,
      downloadUrl: `/v1/tasks/${encodeURIComponent(taskId)}/files/${id}/download`,
      signaled: false
    }
  })
}

export interface IngestBody {
  readonly kind?: string
  readonly data?: Record<string, unknown>
  readonly sourceRef?: unknown
  readonly events?: ReadonlyArray<{ readonly data: Record<string, unknown>; readonly sourceRef?: unknown }>
}

const EVENT_DATA_MAX_BYTES = 256 * 1024
const INSERT_GROUP = 500

export class BadInput extends Error {}

/** S5: the batch's rows inserted in one transaction, 500 rows per statement; undefined: 404. */
export const ingest = async (taskId: string, body: IngestBody) => {
  if ((body.data === undefined) === (body.events === undefined)) throw new BadInput("exactly one of data / events must be set")
  const rows = body.events ?? [{ data: body.data!, sourceRef: body.sourceRef }]
  for (const row of rows) {
    if (Buffer.byteLength(JSON.stringify(row.data), "utf8") > EVENT_DATA_MAX_BYTES) throw new BadInput("event over the size cap")
  }
  return writeTransaction(async (tx) => {
    const task = await tx.execute({ sql: "SELECT id FROM tasks WHERE id = ? AND tenant_id = ?", args: [taskId, tenantId] })
    if (task.rows.length === 0) return undefined
    const createdAt = new Date().toISOString()
    const ids = rows.map(() => recordId())
    for (let start = 0; start < rows.length; start += INSERT_GROUP) {
      const group = rows.slice(start, start + INSERT_GROUP)
      const args: Array<InValue> = []
      group.forEach((row, i) => {
        args.push(
          ids[start + i]!, tenantId, taskId, taskId, body.kind ?? null, JSON.stringify(row.data),
          row.sourceRef !== undefined ? JSON.stringify(row.sourceRef) : null, createdAt
        )
      })
      await tx.execute({
        sql: `INSERT INTO data_records (id, tenant_id, task_id, root_task_id, kind, data, source_ref, created_at) VALUES ${
          group.map(() => "(?, ?, ?, ?, ?, ?, ?, ?)").join(", ")
        }`,
        args
      })
    }
    const out = ids.map((id) => ({ id, status: "accepted" as const, signaled: false }))
    return body.events !== undefined ? out : out[0]
  })
}

/** S4: the document file, streamed by the peer with fs.createReadStream. */
export const document = (() => {
  const file = process.env.BENCH_DOC_FILE
  const id = process.env.BENCH_DOC_ID
  // Only S4 writes the document: a run without S4 (BENCH_ONLY=S1) has none to serve.
  if (file === undefined || id === undefined || !existsSync(file)) return undefined
  return {
    id,
    file,
    headers: {
      "content-type": "application/octet-stream",
      "content-length": String(statSync(file).size),
      "content-disposition": `attachment; filename="bench-256MiB.bin"`
    }
  }
})()

export const notFound = (message: string) => ({ statusCode: 404, message, error: "Not Found" })
export const badRequest = (message: string) => ({ statusCode: 400, message, error: "Bad Request" })

// A signal ends the process normally, so `node --cpu-prof` writes its profile.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(0))
