/**
 * Large documents of the embedded store on a SQLite file keep their bytes as files in a
 * directory beside the database (`<db file>.documents/`), only their record in SQLite.
 *
 * Why: libsql is synchronous, so a document's BLOB chunks were inserted on the event loop
 * (about 10 ms per MiB) and committed in one call (50-90 ms for 30 MiB): 16 concurrent 30 MiB
 * uploads took health p99 past 100 ms. Here the bytes are written, fsync'd and renamed into
 * place with node:fs/promises (the thread pool) before the document's transaction, which then
 * inserts a small row. The file is durable before COMMIT: nothing acknowledged is lost. A raw
 * upload spools into this directory (UploadSpoolDirectory), so its file is the spool renamed.
 *
 * Documents below FILE_BACKED_MIN_BYTES (4 chunks) stay in the database. Measured here: a file
 * (write, fsync, rename, directory fsync) takes 5.4 ms for 256 KiB, 6.6 ms for 1 MiB, 13.9 ms
 * for 4 MiB of wall time, nearly all of it waiting on the disk; chunks cost about 10 ms per MiB
 * of the event loop. At 1 MiB they cross: below it chunks answer sooner and block the loop for a
 * few ms at most, and seeds and the common small upload keep the database file complete alone.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { FileHandle } from "node:fs/promises"
import { mkdir, open, readdir, rename, stat, unlink } from "node:fs/promises"
import { dirname, join } from "node:path"
import { ServiceUnavailable } from "../../api/errors.js"
import { isSpooled, type SpooledBytes } from "../../upstream/model.js"
import { downloadBytesDone } from "../../lib/bufferRelease.js"
import { CHUNK_BYTES } from "./db.js"

/** Documents of at least this size are kept as files (where the store has a database file). */
export const FILE_BACKED_MIN_BYTES = 4 * CHUNK_BYTES

/**
 * Leftovers younger than this are not swept: another process on the same database file may be
 * between writing a document's file and committing its row (bounded by its busy timeout and
 * request timeout, seconds to minutes).
 */
export const SWEEP_MIN_AGE_MS = 60 * 60_000

/** Bytes read per download pull, as a chunk-backed download reads one chunk. */
const READ_BYTES = CHUNK_BYTES

/** Bytes copied per read from a spooled upload. */
const COPY_BYTES = 1024 * 1024

/** Document ids are UUIDs: anything else never names a file (no path can be built from input). */
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface DocumentFilesService {
  /** The directory: `<db file>.documents`. */
  readonly dir: string
  /** Writes the bytes durably as `<dir>/<id>` (via `<id>.part`, fsync'd, renamed, directory fsync'd). */
  readonly write: (id: string, bytes: Uint8Array | SpooledBytes) => Effect.Effect<void, ServiceUnavailable>
  /** Removes `<dir>/<id>`; a file already gone is fine. */
  readonly remove: (id: string) => Effect.Effect<void>
  /**
   * The document's bytes, READ_BYTES per pull (the response's backpressure decides when the next
   * is read). Fails now, 503-class and logged, when the file is missing or not `size` bytes long;
   * a read failing later ends the body with the same error.
   */
  readonly open: (id: string, size: number) => Effect.Effect<Stream.Stream<Uint8Array, ServiceUnavailable>, ServiceUnavailable>
  /**
   * Removes what a crash left: `.part` and `.spool` files (a raw upload's, ../../http/input/rawBody.ts),
   * and files whose id `isStored` denies, all only
   * when older than SWEEP_MIN_AGE_MS. Never fails (a failure is logged).
   */
  readonly sweep: (isStored: (id: string) => Effect.Effect<boolean, unknown>) => Effect.Effect<void>
}

export class DocumentFiles extends Context.Service<DocumentFiles, DocumentFilesService>()("workspace/embedded/DocumentFiles") {}

/** The documents directory of the database file at `databasePath`. */
export const documentsDirOf = (databasePath: string) => `${databasePath}.documents`

const unavailable = (message: string) => new ServiceUnavailable({ message })

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e))

/** The driver's or the file system's own words: Effect.tryPromise keeps them as the cause. */
const reasonOf = (e: unknown): string => {
  const inner = (e as { cause?: unknown } | undefined)?.cause
  return messageOf(inner instanceof Error ? inner : e)
}

const isMissing = (e: unknown) => (e as { code?: unknown } | undefined)?.code === "ENOENT"

const writeAll = async (handle: FileHandle, bytes: Uint8Array, at: number) => {
  let written = 0
  while (written < bytes.byteLength) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.byteLength - written, at + written)
    written += bytesWritten
  }
}

export const makeDocumentFiles = (dir: string): DocumentFilesService => {
  const pathOf = (id: string) => {
    if (!ID.test(id)) throw new Error(`not a document id: ${JSON.stringify(id)}`)
    return join(dir, id)
  }

  const syncDir = async () => {
    const handle = await open(dir, "r")
    try {
      await handle.sync()
    } finally {
      await handle.close()
    }
  }

  const write: DocumentFilesService["write"] = (id, bytes) =>
    Effect.gen(function*() {
      const target = pathOf(id)
      const part = `${target}.part`
      // A spooled upload is copied a slice at a time; each slice is written before the next read.
      const copy = isSpooled(bytes)
        ? (handle: FileHandle) =>
          Effect.gen(function*() {
            for (let at = 0; at < bytes.length; at += COPY_BYTES) {
              const slice = yield* bytes.read(at, Math.min(COPY_BYTES, bytes.length - at))
              if (slice.byteLength !== Math.min(COPY_BYTES, bytes.length - at)) {
                return yield* Effect.die(new Error(`the spooled upload ended at ${at + slice.byteLength} of ${bytes.length} bytes`))
              }
              yield* Effect.promise(() => writeAll(handle, slice, at))
            }
          })
        : (handle: FileHandle) => Effect.promise(() => writeAll(handle, bytes, 0))
      // Spooled into this directory (UploadSpoolDirectory): flushed and renamed into place, no copy.
      if (isSpooled(bytes) && bytes.file !== undefined && dirname(bytes.file.path) === dir) {
        const spool = bytes.file
        const moved = yield* Effect.promise(() =>
          spool.sync().then(() => rename(spool.path, target)).then(() => true, () => false)
        )
        if (moved) return yield* Effect.tryPromise(syncDir)
      }
      // The directory is made when missing only: a mkdir per upload was one more trip to the
      // thread pool for a directory that is there from the first upload on.
      const handle = yield* Effect.tryPromise(() =>
        open(part, "wx", 0o600).catch((e: unknown) =>
          isMissing(e) ? mkdir(dir, { recursive: true, mode: 0o700 }).then(() => open(part, "wx", 0o600)) : Promise.reject(e)
        )
      )
      yield* copy(handle).pipe(
        Effect.andThen(Effect.tryPromise(() => handle.sync())),
        Effect.ensuring(Effect.promise(() => handle.close().catch(() => {})))
      )
      yield* Effect.tryPromise(() => rename(part, target))
      yield* Effect.tryPromise(syncDir)
    }).pipe(
      Effect.catchCause((cause) =>
        Effect.promise(() => unlink(`${join(dir, id)}.part`).catch(() => {})).pipe(
          Effect.andThen(Effect.logError(`workspace store: writing document ${id} to ${dir} failed: ${reasonOf(Cause.squash(cause))}`)),
          Effect.andThen(Effect.fail(unavailable("The upload could not be stored now; try again")))
        )
      )
    )

  const remove: DocumentFilesService["remove"] = (id) =>
    Effect.promise(() =>
      unlink(pathOf(id)).then(() => undefined, (e: unknown) => (isMissing(e) ? undefined : e))
    ).pipe(
      Effect.flatMap((e) => e === undefined ? Effect.void : Effect.logWarning(`workspace store: removing ${join(dir, id)} failed: ${messageOf(e)}`))
    )

  const readFailed = (id: string, why: string) =>
    Effect.andThen(
      Effect.logError(`workspace store: reading document ${id} from ${dir} failed: ${why}`),
      Effect.fail(unavailable("The workspace store is unavailable; try again"))
    )

  const open_: DocumentFilesService["open"] = (id, size) =>
    Effect.gen(function*() {
      const path = pathOf(id)
      const found = yield* Effect.promise(() => stat(path).then((s) => s.size, (e: unknown) => messageOf(e)))
      if (typeof found === "string") return yield* readFailed(id, found)
      if (found !== size) return yield* readFailed(id, `the file has ${found} bytes, the document ${size}`)
      // Opened when the body is first pulled and closed when it ends: an answer without a body opens nothing.
      return Stream.unwrap(Effect.gen(function*() {
        const handle = yield* Effect.acquireRelease(
          Effect.tryPromise(() => open(path, "r")),
          (h) => Effect.promise(() => h.close().catch(() => {}))
        ).pipe(Effect.catch((e) => readFailed(id, reasonOf(e))))
        return Stream.paginate(0, (at: number) =>
          at >= size
            ? Effect.succeed([[], Option.none<number>()] as const)
            : Effect.tryPromise(async () => {
              // A fresh buffer per read: it is handed to the socket.
              const buffer = Buffer.allocUnsafe(Math.min(READ_BYTES, size - at))
              let got = 0
              while (got < buffer.byteLength) {
                const { bytesRead } = await handle.read(buffer, got, buffer.byteLength - got, at + got)
                if (bytesRead === 0) throw new Error(`the file ended at ${at + got} of ${size} bytes`)
                got += bytesRead
              }
              return buffer
            }).pipe(
              Effect.map((buffer) => {
                downloadBytesDone(buffer.byteLength)
                const next = at + buffer.byteLength
                return [[buffer as Uint8Array], Option.some(next)] as const
              }),
              Effect.catch((e) => readFailed(id, reasonOf(e)))
            ))
      }))
    }).pipe(Effect.catchDefect((e) => readFailed(id, messageOf(e))))

  const sweep: DocumentFilesService["sweep"] = (isStored) =>
    Effect.gen(function*() {
      const names = yield* Effect.promise(() => readdir(dir).catch((e: unknown) => (isMissing(e) ? [] : Promise.reject(e))))
      const cutoff = Date.now() - SWEEP_MIN_AGE_MS
      let removed = 0
      for (const name of names) {
        const leftover = /\.(part|spool)$/.exec(name)
        const id = leftover === null ? name : name.slice(0, leftover.index)
        if (!ID.test(id)) continue
        const mtime = yield* Effect.promise(() => stat(join(dir, name)).then((s) => s.mtimeMs, () => undefined))
        if (mtime === undefined || mtime > cutoff) continue
        if (name === id && (yield* isStored(id))) continue
        yield* Effect.promise(() => unlink(join(dir, name)).catch(() => {}))
        removed++
      }
      if (removed > 0) yield* Effect.logInfo(`workspace store: removed ${removed} leftover document file(s) from ${dir}`)
    }).pipe(
      Effect.catchCause((cause) => Effect.logWarning(`workspace store: sweeping ${dir} failed`, cause))
    )

  return { dir, write, remove, open: open_, sweep }
}

/** The documents directory of the database file at `databasePath` (created on the first large upload). */
export const documentFilesLayer = (databasePath: string): Layer.Layer<DocumentFiles> =>
  Layer.succeed(DocumentFiles, makeDocumentFiles(documentsDirOf(databasePath)))
