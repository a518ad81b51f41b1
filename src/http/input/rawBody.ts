/**
 * A raw request body (a file sent as its own bytes) spooled to a temporary file as it arrives,
 * hashed on the way when its digest will be needed: the process holds what the socket has
 * buffered and the chunk being written, never the whole body. The store then reads it back a
 * slice at a time: into a file beside its database before its one transaction
 * (src/workspace/embedded/DocumentFiles.ts), or as chunks inside it (src/workspace/embedded/db.ts
 * insertChunks).
 *
 * Why a spool and not chunks written to the store as they arrive: the embedded store has one
 * writer (SQLite), and the document must appear whole or not at all, so its transaction would
 * hold the write lock for as long as the client takes to send (up to SVC_REQUEST_TIMEOUT_MS):
 * every other write of the cell would wait behind one slow upload. Spooled, the transaction
 * starts once the last byte is in and takes the time of local reads and inserts.
 *
 * The file is unlinked as soon as it is opened: nothing is left behind by a crash, and no other
 * process can open it. Its descriptor is closed with the scope.
 */
import * as HttpServerError from "effect/http/HttpServerError"
import type * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash, randomUUID } from "node:crypto"
import { mkdir, open, unlink } from "node:fs/promises"
import type { FileHandle } from "node:fs/promises"
import { IncomingMessage } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PayloadTooLarge, ServiceUnavailable } from "../../api/errors.js"
import { bodyBytesDone } from "../../lib/bufferRelease.js"
import { BODY_REFUSED, bodyRefused } from "../server/nodeServer.js"

export interface SpooledBody {
  readonly length: number
  /**
   * Hex SHA-256 of the bytes: computed as they arrived when the caller said it would ask
   * (`spoolBody`'s `hashOnTheWay`), otherwise read back from the spool when asked.
   */
  readonly sha256: Effect.Effect<string>
  /**
   * `length` bytes from `offset`, fewer only at the end. The returned view is valid until the
   * next read (one buffer serves them all): use or copy it first.
   */
  readonly read: (offset: number, length: number) => Effect.Effect<Uint8Array>
  /** Spooled into a store's directory: the file's path and a flush to disk (see `spoolBody`). */
  readonly file?: { readonly path: string; readonly sync: () => Promise<void> } | undefined
}

/** The 413 of a body past the cap, naming what is too large. */
export const fileTooLarge = (maxBytes: number) =>
  new PayloadTooLarge({ message: `body: the file exceeds the ${maxBytes}-byte limit (SVC_MAX_BODY_BYTES)` })

/** Ends a request's fiber as a client abort (no answer, no error logged), as the JSON reader does. */
const clientAbort = Effect.failCause(Cause.annotate(Cause.interrupt(), HttpServerError.ClientAbort.annotation))

/**
 * In the OS temporary directory: unlinked at once. In a store's directory (`dir`): kept under its
 * path, `<uuid>.spool`, so the store can rename it into place; removed with the scope unless the
 * store did (a crash leaves it to the store's start-up sweep).
 */
const openSpool = (dir: string | undefined) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      // A store's directory that cannot be used now: the temporary one (the store copies from it).
      const path = dir === undefined ? undefined : join(dir, `${randomUUID()}.spool`)
      const inDir = path === undefined ? undefined : await mkdir(dir!, { recursive: true, mode: 0o700 })
        .then(() => open(path, "wx+", 0o600))
        .catch(() => undefined)
      if (inDir !== undefined) return { handle: inDir, kept: path }
      const temporary = join(tmpdir(), `svc-upload-${randomUUID()}`)
      const handle = await open(temporary, "wx+", 0o600)
      await unlink(temporary).catch(() => {})
      return { handle, kept: undefined }
    }),
    ({ handle, kept }) =>
      Effect.promise(async () => {
        await handle.close().catch(() => {})
        if (kept !== undefined) await unlink(kept).catch(() => {})
      })
  )

class Aborted extends Error {}

/** Written bytes after which a spool in a store's directory starts its early flush (see `spoolIncoming`). */
const EARLY_FLUSH_BYTES = 8 * 1024 * 1024
/** One early flush at a time in the process: each holds a thread of libuv's pool (4) for its whole wait. */
let earlyFlushing = false

/**
 * Node's request, chunk by chunk into the file: the request is paused while a chunk is written,
 * so the socket's own buffer is the only other memory. Flowing mode, not an async iterator: the
 * body's minimum rate is judged only while the request is not paused (./nodeServer.ts
 * watchBodyPace), and an iterated request reads as paused throughout, so a trickle was never cut.
 * Ends with the length; fails with Aborted when the client left or the server refused the rest
 * (413/503 sent), with the write's error when the disk failed.
 */
export const spoolIncoming = (
  message: IncomingMessage,
  handle: FileHandle,
  /** Updated with each chunk; none: the bytes are not hashed. */
  hash: ReturnType<typeof createHash> | undefined,
  maxBytes: number,
  /** Kept for the store (a file it will sync): flush it early, so that sync waits for little. */
  flushEarly = false
): Promise<number | PayloadTooLarge> =>
  new Promise((resolve, reject) => {
    let length = 0
    let unflushed = 0
    // This spool's early flush in flight, and the first one's error: Linux reports a failed
    // writeback once per open file, to the sync that meets it, so the store's sync after the last
    // byte (same descriptor) would succeed though those pages may never reach the disk.
    let flushing: Promise<void> = Promise.resolve()
    let flushFailed: { readonly error: unknown } | undefined
    let settled = false
    // The chunk being written: Node emits 'end' once the request's buffer is empty, paused or not,
    // so the end can come while the last chunk is still being written (a 21-byte upload was read
    // back empty): the spool is done only when that write is.
    let writing: Promise<void> = Promise.resolve()
    const settle = (done: () => void) => {
      if (settled) return
      settled = true
      message.off("data", onData)
      message.off("end", onEnd)
      message.off("error", onAbort)
      message.off("close", onAbort)
      message.off(BODY_REFUSED, onAbort)
      done()
    }
    const writeAll = async (chunk: Buffer, at: number) => {
      let written = 0
      while (written < chunk.byteLength) {
        const { bytesWritten } = await handle.write(chunk, written, chunk.byteLength - written, at + written)
        written += bytesWritten
      }
    }
    const onData = (chunk: Buffer) => {
      const at = length
      length += chunk.byteLength
      // Node caps bodies before the application sees them (./nodeServer.ts); this holds without it.
      if (length > maxBytes) return settle(() => resolve(fileTooLarge(maxBytes)))
      hash?.update(chunk)
      message.pause()
      // Rejects with the disk's error, for the end to see too (it may have settled already).
      writing = writeAll(chunk, at).then(() => {
        bodyBytesDone(chunk.byteLength) // written: dead (src/lib/bufferRelease.ts)
        unflushed += chunk.byteLength
        if (flushEarly && unflushed >= EARLY_FLUSH_BYTES && !earlyFlushing) {
          // The disk writes what has arrived while the rest arrives: the store's sync after the
          // last byte then waits for the last few MiB only, not the whole file. Its error fails
          // the spool (at the end, below): the final sync would not report it again.
          unflushed = 0
          earlyFlushing = true
          flushing = handle.datasync().catch((error) => { flushFailed ??= { error } }).finally(() => { earlyFlushing = false })
        }
        if (!settled) message.resume()
      })
      writing.catch((e) => settle(() => reject(e)))
    }
    const onEnd = () =>
      settle(() =>
        bodyRefused(message) || !message.complete
          ? reject(new Aborted())
          : writing.then(() => flushing).then(() => flushFailed === undefined ? resolve(length) : reject(flushFailed.error), reject))
    const onAbort = () => settle(() => reject(new Aborted()))
    message.on("data", onData)
    message.on("end", onEnd)
    message.on("error", onAbort)
    message.on("close", onAbort)
    // Refused by the server (its answer sent): it stops here, not at an end that may never come.
    message.on(BODY_REFUSED, onAbort)
    if (bodyRefused(message)) onAbort()
  })

/**
 * The request's body in a spool file (scoped: closed with the scope). A body past `maxBytes`
 * fails 413; a client that leaves mid-body ends the fiber as a client abort.
 */
export const spoolBody = (
  request: HttpServerRequest.HttpServerRequest,
  maxBytes: number,
  /** A store's directory to spool into (UploadSpoolDirectory); unset: the OS temporary directory. */
  dir?: string | undefined,
  /**
   * The digest will be asked for (an idempotent write fingerprints the bytes): hash them as they
   * arrive. Otherwise none is made unless asked: SHA-256 is 18-19 ms of CPU per 30 MiB, a fifth
   * of a raw upload's time on this machine (bench/RESULTS.md, "Raw uploads").
   */
  hashOnTheWay = true
): Effect.Effect<SpooledBody, PayloadTooLarge | ServiceUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const { handle, kept } = yield* openSpool(dir)
    const hash = hashOnTheWay ? createHash("sha256") : undefined
    const source = request.source
    const length: number | PayloadTooLarge | undefined = source instanceof IncomingMessage
      ? yield* Effect.tryPromise({
        try: () => spoolIncoming(source, handle, hash, maxBytes, kept !== undefined),
        catch: (e) => e
      }).pipe(Effect.catch((e) =>
        e instanceof Aborted
          ? Effect.succeed(undefined)
          : Effect.andThen(
            Effect.logError(`raw upload: spooling the body to ${dir ?? tmpdir()} failed: ${String(e)}`),
            Effect.fail(new ServiceUnavailable({ message: "The upload could not be stored now; try again" }))
          )
      ))
      // Any other request (a web Request in tests) through its stream.
      : yield* Effect.orDie(Stream.runFoldEffect(
        request.stream,
        () => 0 as number | PayloadTooLarge,
        (n, chunk) =>
          typeof n !== "number"
            ? Effect.succeed(n)
            : n + chunk.byteLength > maxBytes
            ? Effect.succeed(fileTooLarge(maxBytes))
            : Effect.promise(async () => {
              hash?.update(chunk)
              await handle.write(chunk, 0, chunk.byteLength, n)
              return n + chunk.byteLength
            })
      ))
    if (length === undefined) return yield* clientAbort
    if (typeof length !== "number") return yield* Effect.fail(length)
    // One buffer for every read: the store binds a chunk (copying it) before it reads the next.
    let reused: Buffer | undefined
    const read = (offset: number, size: number) =>
      Effect.promise(async () => {
        const n = Math.max(0, Math.min(size, length - offset))
        if (reused === undefined || reused.byteLength < n) reused = Buffer.allocUnsafeSlow(n)
        const buffer = reused.subarray(0, n)
        let got = 0
        while (got < n) {
          const { bytesRead } = await handle.read(buffer, got, n - got, offset + got)
          if (bytesRead === 0) break
          got += bytesRead
        }
        return got === n ? buffer : buffer.subarray(0, got)
      })
    const digest = hash?.digest("hex")
    const sha256 = digest !== undefined ? Effect.succeed(digest) : Effect.promise(async () => {
      // Read back a MiB at a time (the page cache has it; its own buffer, not `read`'s shared one).
      const late = createHash("sha256")
      const buffer = Buffer.allocUnsafeSlow(Math.min(length, 1024 * 1024))
      for (let offset = 0; offset < length;) {
        const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.byteLength, length - offset), offset)
        if (bytesRead === 0) break
        late.update(buffer.subarray(0, bytesRead))
        offset += bytesRead
      }
      return late.digest("hex")
    })
    const file = kept === undefined ? undefined : { path: kept, sync: () => handle.sync() }
    return { length, sha256, read, file } satisfies SpooledBody
  })
