/**
 * Loads a fixture (../../domain/fixture.ts, format in ../shared/fixtures/README.md) into the embedded
 * store: every record upserted by its id, all in one transaction, so loading twice leaves one
 * copy and a failure leaves nothing half-loaded. Validation happens before, in readFixture.
 *
 * Upsert means the fixture wins for the records it names: re-seeding on restart resets them
 * to the file's values, while records created since (new tasks, uploads, events) stay.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { fileURLToPath } from "node:url"
import { rootTaskId } from "../../api/ids.js"
import { resolveExternalRef } from "../../domain/agentRef.js"
import { historyStart } from "../../domain/engine.js"
import { hashApiKey } from "../../domain/apiKeys.js"
import { type Fixture, FixtureError, fixtureOrigin, readFixture } from "../../domain/fixture.js"
import { describeError, insertChunks, nowIso, retryBusy, toJson, upsertGlConnection } from "./db.js"
import { isoInstant } from "../../lib/isoInstant.js"

/** The project's own demo fixture, loaded into an empty database when no seed file is given. */
export const DEMO_FIXTURE = fileURLToPath(new URL("../../../fixtures/demo.json", import.meta.url))

export const loadFixture = (fixture: Fixture, file = "fixture"): Effect.Effect<void, FixtureError, SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const taskTenant = new Map(fixture.tasks.map((t) => [t.id, t.tenantId]))
    // Agents' references resolved (and checked) before anything is written, as the registry does.
    const agents = yield* Effect.forEach(fixture.agents ?? [], (a, i) =>
      resolveExternalRef(a.kind, a.externalRef).pipe(
        Effect.map((externalRef) => ({ ...a, externalRef })),
        Effect.mapError((e) => new FixtureError({ message: `Bad fixture ${file}:\n  $.agents[${i}]: ${e.message}` }))
      ))

    const write = Effect.gen(function*() {
      for (const t of fixture.tenants) {
        yield* sql`INSERT INTO tenants ${sql.insert({ ...t })}
          ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, name = excluded.name`
      }
      for (const e of fixture.entities) {
        yield* sql`INSERT INTO entities ${sql.insert({ id: e.id, tenant_id: e.tenantId, slug: e.slug, name: e.name })}
          ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, slug = excluded.slug, name = excluded.name`
      }
      for (const w of fixture.workflows) {
        yield* sql`INSERT INTO workflows ${
          sql.insert({ id: w.id, tenant_id: w.tenantId, name: w.name, runbook: w.runbook === null ? null : toJson(w.runbook) })
        } ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, name = excluded.name, runbook = excluded.runbook`
      }
      for (const t of fixture.tasks) {
        yield* sql`INSERT INTO tasks ${
          sql.insert({
            id: t.id,
            tenant_id: t.tenantId,
            entity_id: t.entityId,
            workflow_id: t.workflowId,
            title: t.title,
            status: t.status,
            priority: t.priority,
            created_at: t.createdAt,
            current_step: t.currentStep,
            snapshots: toJson(t.snapshots),
            context: "{}",
            // The inbox orders by this as text: one spelling per instant (../../lib/isoInstant.ts).
            waiting_since: isoInstant(t.createdAt),
            // Its step current since ever (not from the fixture's createdAt, which may lie ahead: a
            // decision arriving before it would be bound to this step after the task moved on). A
            // decision is bound to the step current when it arrived, and a task without its first
            // step read one that arrived just before the task moved as one on the step after.
            step_history: toJson(historyStart(t.currentStep, 0))
          })
        } ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, entity_id = excluded.entity_id,
          workflow_id = excluded.workflow_id, title = excluded.title, status = excluded.status,
          priority = excluded.priority, created_at = excluded.created_at, current_step = excluded.current_step,
          snapshots = excluded.snapshots, step_history = excluded.step_history`
      }
      for (const r of fixture.subledgerRows) {
        yield* sql`INSERT INTO subledger_rows ${
          sql.insert({
            ledger: r.ledger,
            id: r.id,
            tenant_id: r.tenantId,
            entity_id: r.entityId,
            task_id: r.taskId,
            status: r.status,
            fields: toJson(r.fields)
          })
        } ON CONFLICT (ledger, id) DO UPDATE SET tenant_id = excluded.tenant_id, entity_id = excluded.entity_id,
          task_id = excluded.task_id, status = excluded.status, fields = excluded.fields`
      }
      for (const d of fixture.documents) {
        const bytes = Buffer.from(d.dataBase64, "base64")
        yield* sql`INSERT INTO documents ${
          sql.insert({
            id: d.id,
            tenant_id: d.tenantId,
            task_id: d.taskId,
            source: d.source,
            filename: d.filename,
            content_type: d.contentType,
            size_bytes: bytes.length,
            uploaded_at: d.uploadedAt,
            uploaded_ms: Date.parse(d.uploadedAt),
            period: null,
            schema_slug: null
          })
        } ON CONFLICT (id) DO UPDATE SET tenant_id = excluded.tenant_id, task_id = excluded.task_id,
          source = excluded.source, filename = excluded.filename, content_type = excluded.content_type,
          size_bytes = excluded.size_bytes, uploaded_at = excluded.uploaded_at, uploaded_ms = excluded.uploaded_ms,
          file_backed = 0`
        yield* sql`DELETE FROM document_chunks WHERE document_id = ${d.id}`
        yield* insertChunks(sql, d.id, bytes)
      }
      // In each stream's seq order: the store's order (positions) follows insertion.
      for (const e of [...fixture.events].sort((a, b) => a.seq - b.seq)) {
        const root = rootTaskId(e.taskId)
        // Events have no id: (taskId, source, seq) is their identity. Without a createdAt in the file, the
        // first load's time is kept, so a reload does not move the timeline.
        const createdAt = e.createdAt ?? null
        yield* sql`INSERT INTO events (task_id, seq, origin, tenant_id, root_task_id, type, source, source_label, payload, group_key, created_at)
          VALUES (${e.taskId}, ${e.seq}, ${fixtureOrigin(e)}, ${taskTenant.get(root)!}, ${root}, ${e.type}, ${e.source}, ${e.sourceLabel ?? null},
            ${toJson(e.payload)}, ${e.groupKey ?? null}, ${createdAt ?? nowIso()})
          ON CONFLICT (task_id, source, seq) WHERE seq IS NOT NULL DO UPDATE SET type = excluded.type,
            origin = excluded.origin, source_label = excluded.source_label, payload = excluded.payload, group_key = excluded.group_key,
            created_at = COALESCE(${createdAt}, events.created_at)`
      }
      // Only the key's hash is stored; loading the same fixture again keeps the same key valid.
      for (const a of agents) {
        yield* sql`INSERT INTO agents ${
          sql.insert({
            id: a.id,
            kind: a.kind,
            external_ref: a.externalRef,
            tenant_id: a.tenantId,
            name: a.name,
            api_key_hash: hashApiKey(a.apiKey),
            created_at: nowIso()
          })
        } ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, external_ref = excluded.external_ref,
          tenant_id = excluded.tenant_id, name = excluded.name, api_key_hash = excluded.api_key_hash`
      }
      for (const g of fixture.glConnections) {
        yield* upsertGlConnection(sql, g)
      }
    })

    yield* sql.withTransaction(write).pipe(
      retryBusy,
      Effect.mapError((e) => {
        // Startup only: the database's own words help whoever runs it (e.g. a slug taken by another id).
        return new FixtureError({ message: `Cannot load fixture ${file}: ${describeError(e)}` })
      })
    )
  })

export const isEmpty = SqlClient.SqlClient.use((sql) =>
  Effect.map(sql<{ n: number }>`SELECT COUNT(*) AS n FROM tenants`, ([row]) => Number(row?.n ?? 0) === 0))

/**
 * The start-up seeding rule: a given seed file is loaded (and must be valid); otherwise an
 * empty database gets the demo fixture. Returns the file loaded, if any, for the startup log.
 */
export const seedOnStart = (seedFile: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isSome(seedFile)) {
      yield* loadFixture(yield* readFixture(seedFile.value), seedFile.value)
      return Option.some(seedFile.value)
    }
    const empty = yield* isEmpty.pipe(
      retryBusy,
      Effect.mapError(() => new FixtureError({ message: "Cannot read the workspace database to decide on seeding" }))
    )
    if (!empty) return Option.none<string>()
    yield* loadFixture(yield* readFixture(DEMO_FIXTURE), DEMO_FIXTURE)
    return Option.some(DEMO_FIXTURE)
  }).pipe(
    Effect.tap(Option.match({
      onNone: () => Effect.logInfo("workspace: database already holds data; no fixture loaded"),
      onSome: (file) => Effect.logInfo(`workspace: loaded fixture ${file}`)
    }))
  )
