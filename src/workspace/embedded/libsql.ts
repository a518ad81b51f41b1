/**
 * The SqlClient for the embedded store: @effect/sql-libsql's LibsqlClient over two libsql
 * connections this module owns, one for autocommit statements and one for transactions.
 *
 * Why not hand LibsqlClient a URL: three driver behaviours bite once two processes share a
 * database file (the lock holder makes the other one's writes fail at once with SQLITE_BUSY,
 * which the store retries asynchronously, ./db.ts):
 * - @libsql/client opens a new connection for every transaction and never closes the old
 *   ones (they wait for garbage collection, two file descriptors each). Here transactions
 *   run BEGIN IMMEDIATE / COMMIT on one long-lived writer connection.
 * - libsql leaves a statement refused with SQLITE_BUSY "in progress" on its connection, and
 *   every later COMMIT there fails ("SQL statements in progress"). Such a connection is closed
 *   and reopened before its next use (after a ROLLBACK: closing a connection inside a
 *   transaction would keep its lock until garbage collection).
 * - LibsqlClient (0.42) takes its connection permit before BEGIN and releases it when the
 *   transaction's scope closes, a scope it never closes when BEGIN itself fails: the permit
 *   leaks and every later query waits forever. Here BEGIN never fails; a transaction that
 *   could not begin fails its statements instead, which rolls back and releases the permit.
 *
 * LibsqlClient runs one transaction at a time per process (it holds a permit for the whole
 * transaction), so one writer connection suffices; autocommit statements run on the other
 * connection, so they never join an open transaction. (Autocommit statements also wait for the
 * permit, so none runs while this process has a transaction open.)
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as LibsqlClient from "@effect/sql-libsql/LibsqlClient"
import * as Libsql from "@libsql/client/sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { startCheckpointer } from "./checkpointer.js"
import { chunkReaderLayer } from "./ChunkReader.js"

/**
 * SQLite's own busy_timeout is 0: its wait is a sleep in the calling thread, which here is the
 * event loop's (measured: a writer blocked by another process's lock froze every request for
 * the whole busy_timeout, 2 s at a time). A busy statement fails at once with SQLITE_BUSY and
 * the store waits asynchronously (retryBusy, ./db.ts), bounded by SVC_DB_BUSY_TIMEOUT_MS.
 */
const SQLITE_BUSY_TIMEOUT_MS = 0

/** Largest size the write-ahead log is truncated to after a checkpoint resets it (SVC_DB_WAL_LIMIT_BYTES). */
export const DEFAULT_WAL_LIMIT_BYTES = 64 * 1024 * 1024

/** Pause between scheduled `wal_checkpoint(TRUNCATE)` runs (SVC_DB_CHECKPOINT_INTERVAL_MS). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 60_000

/** SQLITE_BUSY / SQLITE_LOCKED, including extended codes such as SQLITE_BUSY_SNAPSHOT. */
const isBusy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown } | null)?.code ?? ""))

/** One libsql connection, replaced when a statement failed in a way that leaves it stuck. */
class Connection {
  private client: Libsql.Client | undefined
  /** SQLite's automatic checkpoints, on until a checkpoint worker takes them over (./checkpointer.ts). */
  private autoCheckpoint = true
  constructor(private readonly url: string, private readonly walLimitBytes: number) {}

  get sdk(): Libsql.Client {
    if (this.client === undefined) {
      this.client = Libsql.createClient({ url: this.url })
      // The local driver runs statements synchronously, so these apply before any other use.
      this.client.execute(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`).catch(() => {})
      this.client.execute(`PRAGMA journal_size_limit = ${Math.max(0, Math.floor(this.walLimitBytes))}`).catch(() => {})
      if (!this.autoCheckpoint) this.client.execute("PRAGMA wal_autocheckpoint = 0").catch(() => {})
    }
    return this.client
  }

  /** SQLite's own checkpoints again (the worker could not start). */
  enableAutoCheckpoint() {
    this.autoCheckpoint = true
    this.client?.execute("PRAGMA wal_autocheckpoint = 1000").catch(() => {})
  }

  /** Leaves checkpoints to the worker: no COMMIT on this connection copies the log any more. */
  disableAutoCheckpoint() {
    this.autoCheckpoint = false
    this.client?.execute("PRAGMA wal_autocheckpoint = 0").catch(() => {})
  }

  exec(stmt: Libsql.InStatement): Promise<Libsql.ResultSet> {
    return this.sdk.execute(stmt)
  }

  /** An autocommit statement. A statement refused with SQLITE_BUSY stays stuck: drop the connection. */
  async run(stmt: Libsql.InStatement): Promise<Libsql.ResultSet> {
    try {
      return await this.exec(stmt)
    } catch (error) {
      if (isBusy(error)) this.reset()
      throw error
    }
  }

  /** Ends whatever transaction is open (closing instead would keep its lock until GC). */
  async rollback(): Promise<void> {
    try {
      await this.exec("ROLLBACK")
    } catch {
      // No transaction was open.
    }
  }

  reset() {
    const client = this.client
    this.client = undefined
    try {
      client?.close()
    } catch {
      // Already unusable; nothing more to release.
    }
  }
}

/** A transaction that never began: its statements fail with why; nothing to commit or roll back. */
const failedTransaction = (error: unknown): Libsql.Transaction => {
  let used = false
  const fail = () => {
    used = true
    return Promise.reject(error)
  }
  return {
    execute: fail,
    batch: fail,
    executeMultiple: fail,
    rollback: () => Promise.resolve(),
    commit: () => (used ? Promise.reject(error) : Promise.resolve()),
    close: () => {},
    closed: true
  }
}

const writerTransaction = (writer: Connection): Libsql.Transaction => {
  let done = false
  // After a failed statement nothing more may run in this transaction, so a caller that
  // caught the error cannot commit half of it.
  let broken: { readonly error: unknown } | undefined
  const abort = async (reset: boolean) => {
    await writer.rollback()
    if (reset) writer.reset()
  }
  const end = async (sql: "COMMIT" | "ROLLBACK") => {
    if (done) return
    done = true
    if (broken !== undefined) {
      await abort(isBusy(broken.error))
      if (sql === "COMMIT") throw broken.error
      return
    }
    if (sql === "ROLLBACK") return abort(false)
    try {
      await writer.exec("COMMIT")
    } catch (error) {
      await abort(true)
      throw error
    }
  }
  return {
    execute: async (stmt) => {
      if (broken !== undefined) throw broken.error
      try {
        return await writer.exec(stmt)
      } catch (error) {
        broken = { error }
        throw error
      }
    },
    batch: () => Promise.reject(new Error("batch is not supported")),
    executeMultiple: () => Promise.reject(new Error("executeMultiple is not supported")),
    commit: () => end("COMMIT"),
    rollback: () => end("ROLLBACK"),
    close: () => void end("ROLLBACK"),
    get closed() {
      return done
    }
  }
}

/**
 * The part of the libsql client LibsqlClient uses: `execute` and `transaction("write")`.
 * `beforeWrite` may hold a transaction back (a checkpoint that must run first, ./checkpointer.ts).
 */
const liveClient = (
  reader: Connection,
  writer: Connection,
  beforeWrite: () => Promise<void> | undefined = () => undefined
): Libsql.Client =>
  ({
    execute: (stmt: Libsql.InStatement) => reader.run(stmt),
    transaction: async (mode: Libsql.TransactionMode = "write") => {
      const wait = beforeWrite()
      if (wait !== undefined) await wait
      try {
        await writer.exec(mode === "write" ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        return writerTransaction(writer)
      } catch (error) {
        if (!isBusy(error)) await writer.rollback()
        writer.reset()
        return failedTransaction(error)
      }
    },
    close: () => {
      reader.reset()
      writer.reset()
    }
  }) as unknown as Libsql.Client

export interface LibsqlOptions {
  /**
   * The database file's absolute path: checkpoints then run in a worker thread
   * (./checkpointer.ts). Without it SQLite's own automatic checkpoints stay on.
   */
  readonly path?: string | undefined
  /** journal_size_limit: the WAL is cut back to this size whenever a checkpoint resets it. */
  readonly walLimitBytes?: number | undefined
  /** Pause between scheduled TRUNCATE checkpoints; 0 turns the schedule off (the exit one stays). */
  readonly checkpointIntervalMs?: number | undefined
}

/**
 * The exit checkpoint: copies the write-ahead log into the database and truncates it to zero
 * bytes. It waits for nobody (busy_timeout 0): while another process writes or reads an older
 * snapshot, SQLite checkpoints what it can and leaves the rest to whoever closes last.
 */
const finalCheckpoint = (connection: Connection): Promise<void> =>
  connection.run("PRAGMA wal_checkpoint(TRUNCATE)").then(() => undefined, () => undefined)

/**
 * LibsqlClient + SqlClient on `url`; both connections close with the layer, after a last
 * TRUNCATE checkpoint (a clean exit leaves an empty write-ahead log). With `path`, a worker
 * thread, started once the log first needs it (./checkpointer.ts), checkpoints while the layer is up (PASSIVE as the log grows, TRUNCATE every
 * `checkpointIntervalMs` and before a write once the log is past `walLimitBytes`), so no
 * COMMIT here pays for one and the log stays within the limit plus one transaction;
 * journal_size_limit bounds what a restarted log keeps on disk.
 */
export const libsqlLayer = (
  url: string,
  options: LibsqlOptions = {}
): Layer.Layer<LibsqlClient.LibsqlClient | SqlClient.SqlClient, Error> =>
  Layer.scopedContext(Effect.gen(function*() {
    const walLimitBytes = Math.max(0, Math.floor(options.walLimitBytes ?? DEFAULT_WAL_LIMIT_BYTES))
    const [reader, writer] = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const connections = [new Connection(url, walLimitBytes), new Connection(url, walLimitBytes)] as const
          // Open now, so a bad path fails the start rather than the first request.
          connections.forEach((c) => c.sdk)
          return connections
        },
        catch: (e) => (e instanceof Error ? e : new Error(String(e)))
      }),
      (connections) =>
        Effect.promise(() => finalCheckpoint(connections[1])).pipe(
          Effect.zipRight(Effect.sync(() => connections.forEach((c) => c.reset())))
        )
    )
    let beforeWrite: (() => Promise<void> | undefined) | undefined
    if (options.path !== undefined) {
      // Released before the connections: the worker's connection closes first.
      const runtime = yield* Effect.runtime<never>()
      reader.disableAutoCheckpoint()
      writer.disableAutoCheckpoint()
      const checkpointer = yield* startCheckpointer({
        path: options.path,
        intervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
        walLimitBytes,
        inline: () => finalCheckpoint(reader),
        unavailable: (reason) => {
          reader.enableAutoCheckpoint()
          writer.enableAutoCheckpoint()
          Runtime.runFork(runtime)(Effect.logWarning(
            `workspace database: no checkpoint worker (${reason}); SQLite checkpoints in the request path`
          ))
        }
      })
      beforeWrite = checkpointer.beforeWrite
    }
    const client = yield* LibsqlClient.make({ liveClient: liveClient(reader, writer, beforeWrite) })
    const context = Context.make(LibsqlClient.LibsqlClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    if (options.path === undefined) return context
    // Downloads read the file directly (./ChunkReader.ts); without a path they go through SQL.
    return Context.merge(context, yield* Layer.build(chunkReaderLayer(options.path)))
  })).pipe(Layer.provide(Reactivity.layer))
