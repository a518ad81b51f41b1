/**
 * The embedded store's documents: stored with their file signal, in chunks or (large ones, on a
 * SQLite file) as a file beside the database (./DocumentFiles.ts), read back a chunk at a time.
 */
import * as Effect from "effect/Effect"
import type * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { requireSignalName } from "../../services/signals.js"
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
import { DocumentFiles, FILE_BACKED_MIN_BYTES } from "./DocumentFiles.js"
import { ServiceUnavailable } from "../../api/errors.js"
import { type Transactions, notFound } from "./transaction.js"
import { STAGED_MIN_BYTES, adoptStaged, dropStaged, stageChunks, stagesChunks } from "./stagedChunks.js"

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

    /** Large documents' bytes: a file beside the database (./DocumentFiles.ts), on a SQLite file only. */
    const files = yield* Effect.serviceOption(DocumentFiles)
    const fileOf = (row: DocumentRow) =>
      Option.isNone(files)
        ? Effect.andThen(
          Effect.logError(`workspace store: document ${row.id} is kept as a file, and this store has no documents directory`),
          Effect.fail(new ServiceUnavailable({ message: "The workspace store is unavailable; try again" }))
        )
        : Effect.map(files.value.open(row.id, Number(row.size_bytes)), (body) => ({ document: documentOfRow(row), body }))

    const records: Pick<WorkspaceClientService, "listDocuments" | "putDocument" | "openDocument"> = {
      listDocuments: (tenantId, taskId, query) =>
        sql<DocumentRow>`
          SELECT * FROM documents WHERE tenant_id = ${tenantId} AND task_id = ${rootTaskId(taskId)}
          ${query.source !== undefined ? sql`AND source = ${query.source}` : sql``}
          ORDER BY uploaded_ms DESC, rowid DESC LIMIT ${query.limit}`.pipe(
          Effect.map((rows) => rows.map(documentOfRow)),
          guard("listDocuments")
        ),

      putDocument: (tenantId, doc, signal) => Effect.andThen(requireSignalName(Option.getOrUndefined(signal)?.name), Effect.suspend(() => {
        const id = randomUUID()
        const toFile = Option.isSome(files) && doc.bytes.length >= FILE_BACKED_MIN_BYTES
        const staged = !toFile && stagesChunks(sql) && doc.bytes.length >= STAGED_MIN_BYTES
        const stored = Effect.flatMap(attributionNow, (who) =>
        Effect.andThen(Option.isSome(signal) ? letArrivalsIn(who) : Effect.void, writeThenDeliver(
          "putDocument",
          idempotent(tenantId, writeFingerprint.putDocument(doc, Option.getOrNull(signal)), Effect.gen(function*() {
            const task = yield* taskOf(tenantId, doc.taskId)
            // Bound to the step its request saw; a duplicate file signal stores the file and signals nothing.
            const bound = Option.isSome(signal) ? yield* accept(tenantId, signal.value, who) : undefined
            const uploadedAt = new Date()
            const row: DocumentRow & { uploaded_ms: number; file_backed: number } = {
              id,
              tenant_id: tenantId,
              task_id: task.id,
              source: doc.source,
              filename: doc.filename,
              content_type: doc.contentType,
              size_bytes: doc.bytes.length,
              uploaded_at: uploadedAt.toISOString(),
              uploaded_ms: uploadedAt.getTime(),
              period: doc.period ?? null,
              schema_slug: doc.schemaSlug ?? null,
              file_backed: toFile ? 1 : 0
            }
            yield* sql`INSERT INTO documents ${sql.insert({ ...row })}`
            if (staged) yield* adoptStaged(sql, row.id)
            else if (!toFile) yield* insertChunks(sql, row.id, doc.bytes)
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
        )))
        const committed = (exit: Exit.Exit<{ readonly id: string }, unknown>) => exit._tag === "Success" && exit.value.id === id
        // Staged chunks (./stagedChunks.ts) are dropped unless their document was committed; when
        // the outcome is unknown (the check fails) they stay for the start-up sweep.
        if (staged) {
          return Effect.onExit(
            Effect.andThen(stageChunks(sql, id, doc.bytes).pipe(guard("putDocument")), stored),
            (exit) => committed(exit) ? Effect.void : dropStaged(sql, id).pipe(Effect.catchCause(() => Effect.void))
          )
        }
        if (!toFile) return stored
        // The file is durable before the transaction starts (its write is not cut short by an
        // interruption: a half-written file would be removed under a running write). It is
        // removed again unless its row was committed (a refusal, a rollback, an interruption
        // before the commit, an idempotent replay answering an earlier document). When the
        // outcome is unknown (the check fails) it stays: the start-up sweep removes it later if
        // no row names it.
        return Effect.onExit(
          Effect.andThen(Effect.uninterruptible(files.value.write(id, doc.bytes)), stored),
          (exit) =>
            committed(exit)
              ? Effect.void
              : sql<{ id: string }>`SELECT id FROM documents WHERE id = ${id}`.pipe(
                Effect.flatMap((rows) => rows.length === 0 ? files.value.remove(id) : Effect.void),
                Effect.catchCause(() => Effect.void)
              )
        )
      })),

      openDocument: (tenantId, documentId) =>
        sql<DocumentRow>`SELECT * FROM documents WHERE id = ${documentId} AND tenant_id = ${tenantId}`.pipe(
          Effect.flatMap(([row]) => row === undefined ? notFound(`Document ${documentId}`) : Effect.succeed(row)),
          guard("openDocument"),
          Effect.flatMap((row) =>
            Number(row.file_backed ?? 0) === 1
              ? fileOf(row)
              : Effect.succeed({ document: documentOfRow(row), body: chunksOf(documentId) })
          )
        )
    }
    return records
  })
