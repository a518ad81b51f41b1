/**
 * The SqlClient for the embedded store: @effect/sql-libsql's LibsqlClient over two libsql
 * connections this module owns, one for autocommit statements and one for transactions.
 *
 * Why not hand LibsqlClient a URL: three driver behaviours bite once two processes share a
 * database file (the lock holder makes the other one's writes wait, and past the busy timeout
 * fail with SQLITE_BUSY, which the store retries, ./db.ts):
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
 * connection, so they never join an open transaction.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import * as LibsqlClient from "@effect/sql-libsql/LibsqlClient"
import * as Libsql from "@libsql/client"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * How long SQLite itself waits for another process's write lock. The wait blocks the event
 * loop (the driver is synchronous), but transactions here last milliseconds, and waiting in
 * SQLite avoids the stuck statements a refused one leaves behind. Longer waits fall back to
 * the store's non-blocking retry.
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 2000

/** SQLITE_BUSY / SQLITE_LOCKED, including extended codes such as SQLITE_BUSY_SNAPSHOT. */
const isBusy = (error: unknown) => /^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown } | null)?.code ?? ""))

/** One libsql connection, replaced when a statement failed in a way that leaves it stuck. */
class Connection {
  private client: Libsql.Client | undefined
  constructor(private readonly url: string, private readonly busyTimeoutMs: number) {}

  get sdk(): Libsql.Client {
    if (this.client === undefined) {
      this.client = Libsql.createClient({ url: this.url })
      // The local driver runs statements synchronously, so this applies before any other use.
      this.client.execute(`PRAGMA busy_timeout = ${this.busyTimeoutMs}`).catch(() => {})
    }
    return this.client
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

/** The part of the libsql client LibsqlClient uses: `execute` and `transaction("write")`. */
const liveClient = (reader: Connection, writer: Connection): Libsql.Client =>
  ({
    execute: (stmt: Libsql.InStatement) => reader.run(stmt),
    transaction: async (mode: Libsql.TransactionMode = "write") => {
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

/**
 * LibsqlClient + SqlClient on `url`; both connections close with the layer.
 *
 * `busyTimeoutMs: 0` when two stores share one file inside one process (tests): a waiting
 * SQLite call would block the very event loop the lock holder needs to finish.
 */
export const libsqlLayer = (
  url: string,
  options: { readonly busyTimeoutMs?: number | undefined } = {}
): Layer.Layer<LibsqlClient.LibsqlClient | SqlClient.SqlClient, Error> =>
  Layer.scopedContext(Effect.gen(function*() {
    const [reader, writer] = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const timeout = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
          const connections = [new Connection(url, timeout), new Connection(url, timeout)] as const
          // Open now, so a bad path fails the start rather than the first request.
          connections.forEach((c) => c.sdk)
          return connections
        },
        catch: (e) => (e instanceof Error ? e : new Error(String(e)))
      }),
      (connections) => Effect.sync(() => connections.forEach((c) => c.reset()))
    )
    const client = yield* LibsqlClient.make({ liveClient: liveClient(reader, writer) })
    return Context.make(LibsqlClient.LibsqlClient, client).pipe(Context.add(SqlClient.SqlClient, client))
  })).pipe(Layer.provide(Reactivity.layer))
