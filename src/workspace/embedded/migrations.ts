/**
 * The embedded workspace's schema, created by versioned migrations at start (the @effect/sql
 * Migrator keeps its own table of applied ids). Add a migration; never edit a shipped one.
 *
 * JSON columns are TEXT holding JSON. Timestamps are ISO 8601 TEXT as the API carries them;
 * where order matters an extra `*_ms` INTEGER column sorts by instant, since ISO strings with
 * different precision or offsets do not sort lexically.
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"

/** Runs each statement in turn: the libsql driver executes one statement per call. */
const statements = (...sqls: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(sqls, (s) => sql.unsafe(s), { discard: true }))

const init = statements(
  `CREATE TABLE tenants (
    id TEXT PRIMARY KEY NOT NULL,
    slug TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
  )`,
  `CREATE TABLE entities (
    id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    slug TEXT NOT NULL,
    name TEXT NOT NULL
  )`,
  `CREATE INDEX entities_by_tenant ON entities (tenant_id)`,
  // runbook NULL: the runbook lookup fails (the workflow list omits startParams).
  `CREATE TABLE workflows (
    id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT REFERENCES tenants (id),
    name TEXT NOT NULL,
    runbook TEXT
  )`,
  `CREATE TABLE tasks (
    id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    entity_id TEXT NOT NULL REFERENCES entities (id),
    workflow_id TEXT NOT NULL REFERENCES workflows (id),
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    priority TEXT NOT NULL,
    created_at TEXT NOT NULL,
    current_step TEXT,
    snapshots TEXT NOT NULL DEFAULT '{}',
    context TEXT NOT NULL DEFAULT '{}'
  )`,
  `CREATE INDEX tasks_by_entity ON tasks (tenant_id, entity_id)`,
  `CREATE TABLE subledger_rows (
    ledger TEXT NOT NULL,
    id TEXT NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    entity_id TEXT NOT NULL REFERENCES entities (id),
    task_id TEXT REFERENCES tasks (id),
    status TEXT NOT NULL,
    fields TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (ledger, id)
  )`,
  `CREATE TABLE documents (
    id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    task_id TEXT NOT NULL REFERENCES tasks (id),
    source TEXT NOT NULL,
    filename TEXT NOT NULL,
    content_type TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    uploaded_at TEXT NOT NULL,
    uploaded_ms INTEGER NOT NULL,
    period TEXT,
    schema_slug TEXT
  )`,
  `CREATE INDEX documents_by_task ON documents (tenant_id, task_id, uploaded_ms)`,
  // Bytes live apart from the metadata, in fixed-size chunks, so a download reads one chunk at a time.
  `CREATE TABLE document_chunks (
    document_id TEXT NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (document_id, idx)
  )`,
  // task_id is the id as posted (possibly a composite child id): each child stream has its own seqs.
  `CREATE TABLE events (
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    root_task_id TEXT NOT NULL REFERENCES tasks (id),
    type TEXT NOT NULL,
    source TEXT NOT NULL,
    source_label TEXT,
    payload TEXT NOT NULL,
    group_key TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (task_id, seq)
  )`,
  `CREATE TABLE data_records (
    id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    task_id TEXT NOT NULL,
    root_task_id TEXT NOT NULL REFERENCES tasks (id),
    kind TEXT,
    data TEXT NOT NULL,
    source_ref TEXT,
    created_at TEXT NOT NULL
  )`,
  `CREATE INDEX data_records_by_task ON data_records (root_task_id)`,
  // The transactional outbox. id orders delivery; expected_step is the step current when the
  // signal was accepted, so a late or repeated decision cannot land on a later step.
  `CREATE TABLE signals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    root_task_id TEXT NOT NULL REFERENCES tasks (id),
    task_id TEXT NOT NULL,
    name TEXT NOT NULL,
    payload TEXT NOT NULL,
    expected_step TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT,
    outcome TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    next_attempt_ms INTEGER
  )`,
  `CREATE INDEX signals_pending ON signals (id) WHERE delivered_at IS NULL`,
  `CREATE TABLE gl_connections (
    tenant_id TEXT PRIMARY KEY NOT NULL REFERENCES tenants (id),
    provider TEXT NOT NULL,
    service TEXT NOT NULL,
    status TEXT NOT NULL,
    connected_at TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
  )`,
  `CREATE TABLE gl_sessions (
    consumer_id TEXT PRIMARY KEY NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    service_id TEXT,
    created_at TEXT NOT NULL,
    completed_at TEXT
  )`,
  // Only a SHA-256 of the API key is kept; the plaintext exists once, in the create response.
  `CREATE TABLE agents (
    id TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    external_ref TEXT NOT NULL,
    tenant_id TEXT NOT NULL REFERENCES tenants (id),
    name TEXT NOT NULL,
    api_key_hash TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
  )`,
  `CREATE TABLE agent_versions (
    agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    version TEXT NOT NULL,
    config TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    PRIMARY KEY (agent_id, version)
  )`
)

/**
 * Idempotent writes (../idempotency.ts): the result of each keyed write, stored in the write's
 * own transaction, per tenant and key; `fingerprint` identifies the request (operation and
 * arguments) so that a key reused for another request is refused. Rows older than 24 hours
 * are pruned (by created_ms).
 */
const idempotencyKeys = statements(
  `CREATE TABLE idempotency_keys (
    tenant_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    result TEXT,
    created_ms INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, key)
  )`,
  `CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_ms)`
)

/**
 * The outbox relay reads a task's oldest pending signals (./outbox.ts): without this index that
 * query walks every pending signal of other tasks first (100,000 of them behind a backlog).
 */
const signalsByTask = statements(
  `CREATE INDEX signals_pending_by_task ON signals (root_task_id, id) WHERE delivered_at IS NULL`
)

/** A table step's next-step args carry the task's rows (../runbook.ts): found by task, not by a scan. */
const subledgerRowsByTask = statements(
  `CREATE INDEX subledger_rows_by_task ON subledger_rows (task_id, ledger)`
)

export const migrations = Migrator.fromRecord({
  "0001_init": init,
  "0002_idempotency_keys": idempotencyKeys,
  "0003_signals_pending_by_task": signalsByTask,
  "0004_subledger_rows_by_task": subledgerRowsByTask
})

/** The Migrator for SQLite dialects (no schema dump: the schema is this file). */
const migrator = Migrator.make({})

/**
 * Applies pending migrations. WAL is switched on first: it is a property of the database
 * file (so it outlives this connection) and lets readers run beside a writer, which matters
 * when two gateway processes share one database.
 */
export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe("PRAGMA journal_mode = WAL")
  return yield* migrator({ loader: migrations, table: "workspace_migrations" })
})
