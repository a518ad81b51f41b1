/**
 * The download read path of the embedded store (SQLite file only): document chunks read by one
 * statement prepared once on a read-only connection of its own. Each read is its own short read
 * transaction, so a long download holds no snapshot that would keep the write-ahead log from
 * being checkpointed, and holds one chunk at a time.
 *
 * Measured against @libsql/client's `execute` per chunk (which prepares, describes the columns
 * and builds a result set every time): 178 vs 242 ms of CPU per 256 MiB in one process
 * (bench/experiments/s4-read.ts). Not taken, measured: `PRAGMA mmap_size` (105 ms there, but in
 * the server the mapped pages count as RSS: +286 MB while two downloads ran, and page faults
 * cost more CPU than the copies saved); one statement iterated over all chunks (the driver
 * fetches 100 rows per step: 25 MiB held per download).
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type Database from "libsql"
import { createRequire } from "node:module"
import { ServiceUnavailable } from "../../api/errors.js"
import { downloadBytesDone } from "../../lib/bufferRelease.js"
import { describeError } from "./db.js"

export interface ChunkReaderService {
  /** Chunk `idx` of the document, or undefined past its last chunk. Throws SQLite's errors. */
  readonly read: (documentId: string, idx: number) => Uint8Array | undefined
}

export class ChunkReader extends Context.Service<ChunkReader, ChunkReaderService>()("workspace/embedded/ChunkReader") {}

/**
 * A reader on the database file at `path`, opened on the first read (the schema is migrated
 * after the layers are built) and closed with the layer.
 */
export const chunkReaderLayer = (path: string): Layer.Layer<ChunkReader> =>
  Layer.effect(
    ChunkReader,
    Effect.gen(function*() {
      let db: Database.Database | undefined
      let select: Database.Statement<Array<unknown>> | undefined
      yield* Effect.addFinalizer(() => Effect.sync(() => db?.close()))
      const statement = () => {
        if (select === undefined) {
          // Loaded on the first download: a gateway with a remote workspace never loads it here.
          const Libsql = createRequire(import.meta.url)("libsql") as typeof Database
          db = new Libsql(path, { readonly: true })
          select = db.prepare("SELECT data FROM document_chunks WHERE document_id = ? AND idx = ?").raw(true)
        }
        return select
      }
      return {
        read: (documentId, idx) => (statement().get(documentId, idx) as [Uint8Array] | undefined)?.[0]
      } satisfies ChunkReaderService
    })
  )

/**
 * The document's bytes, one chunk per pull (the response's backpressure decides when the next
 * is read). A failed read ends the body with a 503-class error; the detail goes to the log only.
 */
export const readChunks = (reader: ChunkReaderService, documentId: string): Stream.Stream<Uint8Array, ServiceUnavailable> =>
  Stream.paginate(0, (idx: number) =>
    Effect.try({
      try: () => {
        const data = reader.read(documentId, idx)
        if (data !== undefined) downloadBytesDone(data.byteLength)
        return data === undefined
          ? [[], Option.none<number>()] as const
          : [[data], Option.some(idx + 1)] as const
      },
      catch: (e) => e
    }).pipe(
      Effect.catch((e) =>
        Effect.logError(`workspace store: reading document ${documentId} failed: ${describeError(e)}`).pipe(
          Effect.andThen(Effect.fail(new ServiceUnavailable({ message: "The workspace store is unavailable; try again" })))
        )
      )
    ))
