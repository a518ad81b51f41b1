/**
 * The SqlClient for the embedded store: effect/sql's SqlClient over two libsql connections
 * this module owns, one for autocommit statements and one for transactions.
 *
 * Why not @effect/sql-libsql's LibsqlClient: 4.0.0-beta.98 (the newest) is built against an
 * Effect 4 beta whose `makeWithTransaction` took an effect, where 4.1 takes a function; under
 * effect 4.1 every `withTransaction` dies with "options.acquireConnection is not a function".
 * And three driver behaviours bite once two processes share a database file (the lock holder
 * makes the other one's writes fail at once with SQLITE_BUSY, which the store retries
 * asynchronously, ./db.ts):
 * - @libsql/client opens a new connection for every transaction and never closes the old
 *   ones (they wait for garbage collection, two file descriptors each). Here transactions
 *   run BEGIN IMMEDIATE / COMMIT on one long-lived writer connection.
 * - libsql leaves a statement refused with SQLITE_BUSY "in progress" on its connection, and
 *   every later COMMIT there fails ("SQL statements in progress"). Such a connection is closed
 *   and reopened before its next use (after a ROLLBACK: closing a connection inside a
 *   transaction would keep its lock until garbage collection).
 * - After a failed statement nothing more runs in the transaction: a caller that caught the
 *   error cannot commit half of it.
 *
 * Commits are durable before anything is answered, without the event loop waiting on the disk: on
 * a WAL file the connections run synchronous=NORMAL and every result waits for the log's sync in
 * the thread pool (./walSync.ts, `durableTransactions`).
 *
 * One transaction at a time per process (a one-permit semaphore held for the whole
 * transaction), so one writer connection suffices; autocommit statements run on the other
 * connection, so they never join an open transaction, and wait for the permit first, so none
 * starts while this process has a transaction open.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Semaphore from "effect/Semaphore"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { classifySqliteError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import * as Stream from "effect/Stream"
import * as Libsql from "@libsql/client/sqlite3"
import { startCheckpointer } from "./checkpointer.js"
import { chunkReaderLayer } from "./ChunkReader.js"
import { documentFilesLayer } from "./DocumentFiles.js"
import { makeWalSync, type SyncFile, type WalSync } from "./walSync.js"
import { defaultOf } from "../../config/settings.js"
import { installStatementCache } from "./statementCache.js"

installStatementCache()

/**
 * SQLite's own busy_timeout is 0: its wait is a sleep in the calling thread, which here is the
 * event loop's (measured: a writer blocked by another process's lock froze every request for
 * the whole busy_timeout, 2 s at a time). A busy statement fails at once with SQLITE_BUSY and
 * the store waits asynchronously (retryBusy, ./db.ts), bounded by SVC_DB_BUSY_TIMEOUT_MS.
 */
const SQLITE_BUSY_TIMEOUT_MS = 0

/** Largest size the write-ahead log is truncated to after a checkpoint resets it (SVC_DB_WAL_LIMIT_BYTES). */
export const DEFAULT_WAL_LIMIT_BYTES = defaultOf("SVC_DB_WAL_LIMIT_BYTES")

/** Pause between scheduled `wal_checkpoint(TRUNCATE)` runs (SVC_DB_CHECKPOINT_INTERVAL_MS). */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = defaultOf("SVC_DB_CHECKPOINT_INTERVAL_MS")

/** SQLITE_BUSY / SQLITE_LOCKED, including extended codes such as SQLITE_BUSY_SNAPSHOT. */
const isBusy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown } | null)?.code ?? ""))

/** One libsql connection, replaced when a statement failed in a way that leaves it stuck. */
class Connection {
  private client: Libsql.Client | undefined
  /** SQLite's automatic checkpoints, on until a checkpoint worker takes them over (./checkpointer.ts). */
  private autoCheckpoint = true
  /** `synchronous=NORMAL`: commits write the log without syncing it; ./walSync.ts syncs it off the loop. */
  private relaxed = false
  constructor(private readonly url: string, private readonly walLimitBytes: number) {}

  get sdk(): Libsql.Client {
    if (this.client === undefined) {
      this.client = Libsql.createClient({ url: this.url })
      // The local driver runs statements synchronously, so these apply before any other use.
      this.client.execute(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`).catch(() => {})
      this.client.execute(`PRAGMA journal_size_limit = ${Math.max(0, Math.floor(this.walLimitBytes))}`).catch(() => {})
      if (!this.autoCheckpoint) this.client.execute("PRAGMA wal_autocheckpoint = 0").catch(() => {})
      if (this.relaxed) this.client.execute("PRAGMA synchronous = NORMAL").catch(() => {})
    }
    return this.client
  }

  /** Commits no longer sync the log here (the database is in WAL mode and a WalSync syncs it). */
  relaxSync() {
    this.relaxed = true
    this.client?.execute("PRAGMA synchronous = NORMAL").catch(() => {})
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

/** The driver's failure as effect/sql classifies it (busy and locked become LockTimeoutError). */
const sqlError = (operation: string, message: string) => (cause: unknown) =>
  new SqlError({ reason: classifySqliteError(cause, { message, operation }) })

/** An effect/sql connection over `run`; rows come back as the driver gives them. */
const sqlConnection = (run: (stmt: Libsql.InStatement) => Promise<Libsql.ResultSet>): SqlConnection.Connection => {
  const raw = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.tryPromise({
      // The compiler only binds values libsql accepts (strings, numbers, bigints, booleans, bytes, null).
      try: () => run({ sql, args: params as Array<Libsql.InValue> }),
      catch: sqlError("execute", "Failed to execute statement")
    })
  const rows = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => Effect.map(raw(sql, params), (r) => (transformRows ? transformRows(r.rows) : r.rows))
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(raw(sql, params), (r) => r.rows.map((row) => Array.from(row)))
  return {
    execute: rows,
    executeUnprepared: rows,
    executeRaw: raw,
    executeValues: values,
    executeValuesUnprepared: values,
    executeStream: () => Stream.die("executeStream is not implemented")
  }
}

/**
 * The writer's transaction statements. SqlClient sends BEGIN IMMEDIATE, COMMIT, ROLLBACK and the
 * savepoint statements through the connection as SQL; they are handled here so that a busy or
 * failed statement leaves the connection usable and a broken transaction never commits.
 * `beforeWrite` may hold BEGIN back (a checkpoint that must run first, ./checkpointer.ts).
 */
const writerRun = (writer: Connection, beforeWrite: () => Promise<void> | undefined, wal: WalSync | undefined) => {
  // The failure of a statement of the open transaction: nothing more runs in it.
  let broken: { readonly error: unknown } | undefined
  const abort = async (reset: boolean) => {
    await writer.rollback()
    if (reset) writer.reset()
  }
  return async (stmt: Libsql.InStatement): Promise<Libsql.ResultSet> => {
    const sql = typeof stmt === "string" ? stmt : stmt.sql
    if (sql === "BEGIN IMMEDIATE") {
      broken = undefined
      const wait = beforeWrite()
      if (wait !== undefined) await wait
      try {
        return await writer.exec(sql)
      } catch (error) {
        if (!isBusy(error)) await writer.rollback()
        writer.reset()
        throw error
      }
    }
    if (sql === "COMMIT") {
      if (broken !== undefined) {
        const { error } = broken
        broken = undefined
        await abort(isBusy(error))
        throw error
      }
      // The driver runs the COMMIT within this call: it is counted before any other fiber can
      // read what it wrote (counting a COMMIT that failed costs one sync more, nothing else). In
      // the log, not yet on disk: the transaction's caller waits for it (durableTransactions).
      const committing = writer.exec(sql)
      wal?.committed()
      try {
        return await committing
      } catch (error) {
        await abort(true)
        throw error
      }
    }
    if (sql === "ROLLBACK") {
      // Never fails: SQLite may have ended the transaction itself (e.g. on SQLITE_FULL).
      const reset = broken !== undefined && isBusy(broken.error)
      broken = undefined
      await abort(reset)
      return EMPTY_RESULT
    }
    if (broken !== undefined) {
      // The whole transaction rolls back anyway; its savepoint has nothing left to undo.
      if (sql.startsWith("ROLLBACK TO SAVEPOINT")) return EMPTY_RESULT
      throw broken.error
    }
    try {
      return await writer.exec(stmt)
    } catch (error) {
      broken = { error }
      throw error
    }
  }
}

const EMPTY_RESULT: Libsql.ResultSet = {
  columns: [],
  columnTypes: [],
  rows: [],
  rowsAffected: 0,
  lastInsertRowid: undefined,
  toJSON: () => ({ columns: [], columnTypes: [], rows: [], rowsAffected: 0, lastInsertRowid: null })
}

/** An autocommit statement that only reads; any other may have written (and waits for its sync). */
const READ_ONLY = /^\s*SELECT\b/i

/** A failed sync of the log: what was committed may not be on disk, so nothing is acknowledged (503). */
const syncFailed = (cause: unknown) =>
  new SqlError({ reason: classifySqliteError(cause, { message: "Failed to sync the write-ahead log", operation: "sync" }) })

/** Settles once everything committed so far is on disk (nothing to wait for without a WalSync). */
const durableNow = (wal: WalSync | undefined): Effect.Effect<void, SqlError> =>
  Effect.suspend(() => {
    const pending = wal?.durable()
    return pending === undefined ? Effect.void : Effect.tryPromise({ try: () => pending, catch: syncFailed })
  })

/**
 * A transaction's outcome leaves the client only once its commit is on disk (./walSync.ts): the
 * wait follows the COMMIT and the release of the writer, so the next transaction runs meanwhile
 * and shares the sync. A failed or rolled-back transaction waits too: what it read (an error may
 * carry a value) was committed by others and may not be on disk yet. Nested transactions
 * (savepoints) leave it to the outermost.
 */
const durableTransactions = (client: SqlClient.SqlClient, wal: WalSync): SqlClient.SqlClient => {
  const withTransaction = client.withTransaction
  const durable: SqlClient.SqlClient["withTransaction"] = (effect) =>
    Effect.withFiber((fiber) =>
      Context.getOption(fiber.context, client.transactionService)._tag === "Some"
        ? withTransaction(effect)
        : Effect.flatMap(Effect.exit(withTransaction(effect)), (exit) => Effect.andThen(durableNow(wal), exit))
    )
  // The same object (its `safe` and `withoutTransforms` refer to it), with the waiting transaction.
  return Object.assign(client, { withTransaction: durable })
}

/**
 * The SqlClient over the two connections (SQLite dialect, one transaction at a time). With a
 * WalSync, every result (an autocommit statement's, read or write, and a transaction's) waits
 * until everything committed before it is on disk: a read may see a commit whose sync is running.
 */
const makeClient = (
  reader: Connection,
  writer: Connection,
  beforeWrite: () => Promise<void> | undefined,
  wal: WalSync | undefined
) =>
  Effect.gen(function*() {
    const permit = yield* Semaphore.make(1)
    const autocommit = sqlConnection(
      wal === undefined ? (stmt) => reader.run(stmt) : async (stmt) => {
        // The statement runs within this call (the driver is synchronous): what it may have
        // written is counted, and what it may have seen is waited for, before anything else runs.
        const running = reader.run(stmt)
        if (!READ_ONLY.test(typeof stmt === "string" ? stmt : stmt.sql)) wal.committed()
        const pending = wal.durable()
        pending?.catch(() => {}) // awaited below unless the statement failed
        const result = await running
        // A failed sync rejects with the file system's error: a SqlError as any failed statement.
        if (pending !== undefined) await pending
        return result
      }
    )
    const transactional = sqlConnection(writerRun(writer, beforeWrite, wal))
    const client = yield* SqlClient.make({
      driver: "libsql",
      compiler: Statement.makeCompilerSqlite(),
      spanAttributes: [["db.system.name", "sqlite"]],
      beginTransaction: "BEGIN IMMEDIATE",
      // Waits until no transaction of this process is open; the statement itself runs on the reader.
      acquirer: permit.withPermits(1)(Effect.succeed(autocommit)),
      // Held until the transaction's scope closes (after COMMIT or ROLLBACK, or a failed BEGIN).
      transactionAcquirer: Effect.as(permit.takeScoped(1), transactional)
    })
    return wal === undefined ? client : durableTransactions(client, wal)
  })

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
  /** Replaces the log's fdatasync (./walSync.ts): tests hold it back to see who waits for it. */
  readonly syncFile?: SyncFile | undefined
}

/**
 * With a database file: WAL mode (the migrations ask for it too; set here so a new file gets it
 * before its first write), and if the file is in WAL mode, commits that write the log without
 * syncing it and a WalSync that syncs it off the event loop. A file that cannot be in WAL mode
 * (or is locked by another process switching it) keeps SQLite's FULL syncs in the COMMIT.
 */
const walSyncFor = async (reader: Connection, path: string, syncFile: SyncFile | undefined): Promise<WalSync | undefined> => {
  const mode = await reader.run("PRAGMA journal_mode = WAL").then(
    (r) => String(r.rows[0]?.[0] ?? "").toLowerCase(),
    () => ""
  )
  return mode === "wal" ? makeWalSync(path, syncFile) : undefined
}

/**
 * The exit checkpoint: copies the write-ahead log into the database and truncates it to zero
 * bytes. It waits for nobody (busy_timeout 0): while another process writes or reads an older
 * snapshot, SQLite checkpoints what it can and leaves the rest to whoever closes last.
 */
const finalCheckpoint = (connection: Connection): Promise<void> =>
  connection.run("PRAGMA wal_checkpoint(TRUNCATE)").then(() => undefined, () => undefined)

/**
 * SqlClient on `url`; both connections close with the layer, after a last TRUNCATE checkpoint
 * (a clean exit leaves an empty write-ahead log). With `path`, a worker thread, started once the
 * log first needs it (./checkpointer.ts), checkpoints while the layer is up (PASSIVE as the log
 * grows, TRUNCATE every `checkpointIntervalMs` and before a write once the log is past
 * `walLimitBytes`), so no COMMIT here pays for one and the log stays within the limit plus one
 * transaction; journal_size_limit bounds what a restarted log keeps on disk.
 */
export const libsqlLayer = (
  url: string,
  options: LibsqlOptions = {}
): Layer.Layer<SqlClient.SqlClient, Error> =>
  Layer.effectContext(Effect.gen(function*() {
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
          Effect.andThen(Effect.sync(() => connections.forEach((c) => c.reset())))
        )
    )
    const wal = options.path === undefined ? undefined : yield* Effect.promise(() => walSyncFor(reader, options.path!, options.syncFile))
    if (wal !== undefined) {
      reader.relaxSync()
      writer.relaxSync()
      // Its kept handle of the log closes with the layer.
      yield* Effect.addFinalizer(() => Effect.promise(() => wal.close()))
    }
    let beforeWrite: () => Promise<void> | undefined = () => undefined
    if (options.path !== undefined) {
      // Released before the connections: the worker's connection closes first.
      const context = yield* Effect.context<never>()
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
          Effect.runForkWith(context)(Effect.logWarning(
            `workspace database: no checkpoint worker (${reason}); SQLite checkpoints in the request path`
          ))
        }
      })
      beforeWrite = checkpointer.beforeWrite
    }
    const client = yield* makeClient(reader, writer, beforeWrite, wal)
    const context = Context.make(SqlClient.SqlClient, client)
    if (options.path === undefined) return context
    // Downloads read the file directly (./ChunkReader.ts); without a path they go through SQL.
    // Large documents are files beside it (./DocumentFiles.ts); without a path, chunks as ever.
    return Context.merge(
      Context.merge(context, yield* Layer.build(chunkReaderLayer(options.path))),
      yield* Layer.build(documentFilesLayer(options.path))
    )
  })).pipe(Layer.provide(Reactivity.layer))
