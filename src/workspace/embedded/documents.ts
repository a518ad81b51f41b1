/** The embedded store's documents: stored in chunks with their file signal, read back a chunk at a time. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { rootTaskId } from "../../api/ids.js"
import type { WorkspaceClientService } from "../../upstream/WorkspaceClient.js"
import { type DocumentRow, documentOfRow, insertChunks } from "./db.js"
import { audit } from "../../domain/engine.js"
import { attributionNow } from "../../services/Actor.js"
import { appendToTimeline } from "./timeline.js"
import { writeFingerprint } from "../../domain/idempotency.js"
import { ChunkReader, readChunks } from "./ChunkReader.js"
import { type Transactions, notFound } from "./transaction.js"

export const makeDocumentRecords = (tx: Transactions) =>
  Effect.gen(function*() {
    const { sql, outbox, guard, taskOf, accept, signalFor, letArrivalsIn, writeThenDeliver, idempotent } = tx
    /** The bytes, one chunk per query: a download holds at most one chunk in memory. */
    const chunkReader = yield* Effect.serviceOption(ChunkReader)
    const chunksOf = (documentId: string) =>
      Option.isSome(chunkReader) ? readChunks(chunkReader.value, documentId) : Stream.paginate(0, (idx: number) =>
        sql<{ data: ArrayBuffer }>`SELECT data FROM document_chunks WHERE document_id = ${documentId} AND idx = ${idx}`.pipe(
          Effect.map(([row]) =>
            row === undefined
              ? [[], Option.none<number>()] as const
              : [[new Uint8Array(row.data)], Option.some(idx + 1)] as const
          ),
          guard("readDocument")
        ))

    const records: Pick<WorkspaceClientService, "listDocuments" | "putDocument" | "openDocument"> = {
      listDocuments: (tenantId, taskId, query) =>
        sql<DocumentRow>`
          SELECT * FROM documents WHERE tenant_id = ${tenantId} AND task_id = ${rootTaskId(taskId)}
          ${query.source !== undefined ? sql`AND source = ${query.source}` : sql``}
          ORDER BY uploaded_ms DESC, rowid DESC LIMIT ${query.limit}`.pipe(
          Effect.map((rows) => rows.map(documentOfRow)),
          guard("listDocuments")
        ),

      putDocument: (tenantId, doc, signal) =>
        Effect.flatMap(attributionNow, (who) =>
        Effect.andThen(Option.isSome(signal) ? letArrivalsIn(who) : Effect.void, writeThenDeliver(
          "putDocument",
          idempotent(tenantId, writeFingerprint.putDocument(doc, Option.getOrNull(signal)), Effect.gen(function*() {
            const task = yield* taskOf(tenantId, doc.taskId)
            // Bound to the step its request saw; a duplicate file signal stores the file and signals nothing.
            const bound = Option.isSome(signal) ? yield* accept(tenantId, signal.value, who) : undefined
            const uploadedAt = new Date()
            const row: DocumentRow & { uploaded_ms: number } = {
              id: randomUUID(),
              tenant_id: tenantId,
              task_id: task.id,
              source: doc.source,
              filename: doc.filename,
              content_type: doc.contentType,
              size_bytes: doc.bytes.length,
              uploaded_at: uploadedAt.toISOString(),
              uploaded_ms: uploadedAt.getTime(),
              period: doc.period ?? null,
              schema_slug: doc.schemaSlug ?? null
            }
            yield* sql`INSERT INTO documents ${sql.insert({ ...row })}`
            yield* insertChunks(sql, row.id, doc.bytes)
            const stored = documentOfRow(row)
            yield* appendToTimeline(sql, tenantId, task.id, [
              audit.fileStored(stored, Option.isSome(signal) ? signal.value.name : null, who)
            ], row.uploaded_at)
            if (Option.isSome(signal) && bound !== undefined) {
              const withRef = { ...signal.value, payload: { ...signal.value.payload, documentRef: row.id } }
              yield* outbox.record([signalFor(tenantId, bound, withRef, who)])
            }
            return stored
          }))
        ))),

      openDocument: (tenantId, documentId) =>
        sql<DocumentRow>`SELECT * FROM documents WHERE id = ${documentId} AND tenant_id = ${tenantId}`.pipe(
          Effect.flatMap(([row]) =>
            row === undefined
              ? notFound(`Document ${documentId}`)
              : Effect.succeed({ document: documentOfRow(row), body: chunksOf(documentId) })
          ),
          guard("openDocument")
        )
    }
    return records
  })
