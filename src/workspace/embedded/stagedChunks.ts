/**
 * PostgreSQL: a large document's chunks are written in a transaction of their own, before the
 * transaction that records the document (its row, its audit event, its signal).
 *
 * Why: a timeline reader takes only events of transactions older than every store writer still
 * running (./timeline.ts `settledEvents`), so a writer inserting 32 MiB of chunks (about 1.3 s
 * here) held back every event written after it began, on every task and replica: a producer's
 * event reached readers 1.8-1.9 s after its 200, where the README says within a second. The
 * staging transaction is no timeline writer (it takes no writer lock), so readers do not wait
 * for it, and it holds no lock of the task's.
 *
 * Chunks no committed document names are removed: at once when the recording transaction is
 * known not to have committed it (a refusal, a rollback, an idempotent replay answering an
 * earlier document), and otherwise (a crash, an unknown outcome) by the start-up sweep once an
 * hour old (another replica may be between staging and committing).
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SpooledBytes } from "../../upstream/model.js"
import { insertChunks } from "./db.js"
import { SWEEP_MIN_AGE_MS } from "./DocumentFiles.js"

/** Documents of at least this size are staged (1 MiB, 4 chunks: SQLite's file-backed threshold). */
export { FILE_BACKED_MIN_BYTES as STAGED_MIN_BYTES } from "./DocumentFiles.js"

/** Whether this store stages large documents' chunks (PostgreSQL). */
export const stagesChunks = (sql: SqlClient.SqlClient): boolean =>
  sql.onDialectOrElse({ pg: () => true, orElse: () => false })

/** Writes the chunks and names the document as staged, in one transaction of their own. */
export const stageChunks = (sql: SqlClient.SqlClient, documentId: string, bytes: Uint8Array | SpooledBytes) =>
  sql.withTransaction(Effect.andThen(
    sql`INSERT INTO staged_documents (id, staged_ms) VALUES (${documentId}, ${Date.now()})`,
    insertChunks(sql, documentId, bytes)
  ))

/** In the recording transaction: the document's chunks are its own from this commit on. */
export const adoptStaged = (sql: SqlClient.SqlClient, documentId: string) =>
  sql`DELETE FROM staged_documents WHERE id = ${documentId}`

/** Removes a staged document's chunks, unless a committed document is named by its id. */
export const dropStaged = (sql: SqlClient.SqlClient, documentId: string) =>
  sql.withTransaction(Effect.gen(function*() {
    const recorded = yield* sql<{ id: string }>`SELECT id FROM documents WHERE id = ${documentId}`
    if (recorded.length === 0) yield* sql`DELETE FROM document_chunks WHERE document_id = ${documentId}`
    yield* sql`DELETE FROM staged_documents WHERE id = ${documentId}`
  }))

/** At start: drops what was staged over an hour ago and never recorded. Never fails (logged). */
export const sweepStaged = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const old = yield* sql<{ id: string }>`SELECT id FROM staged_documents WHERE staged_ms < ${Date.now() - SWEEP_MIN_AGE_MS}`
    for (const { id } of old) yield* dropStaged(sql, id)
    if (old.length > 0) yield* Effect.logInfo(`workspace store: removed the chunks of ${old.length} document(s) staged and never recorded`)
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("workspace store: sweeping staged documents failed", cause)))
