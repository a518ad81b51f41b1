/**
 * The SqlClient for the workspace on PostgreSQL (@effect/sql-pg over a node-postgres pool), the
 * shared store of several gateway replicas (SVC_DATABASE_URL=postgres://...).
 *
 * Transactions run at READ COMMITTED (PostgreSQL's default); where replicas could race, the store
 * takes a row lock first (the task of a decision, ./store.ts; the task being delivered to,
 * ./outbox.ts), makes row transitions compare-and-set, and leaves uniqueness to constraints.
 * SERIALIZABLE was considered and not used: a bulk ingest (about 100 ms) reads its task and adds
 * signals while the relay delivers to that task (reads its signals, updates the task), a
 * read-write cycle that would abort the ingest again and again under load (not measured).
 *
 * Every connection carries the statement timeout and an idle-in-transaction timeout (a holder
 * that hangs mid-transaction loses its locks), set as start-up options so no query pays for them.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Pg from "pg"
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, type PgOptions } from "./pgUrl.js"

export * from "./pgUrl.js"

/** Idle-in-transaction bound: a transaction nobody drives any more gives up its row locks. */
const idleInTransactionMs = (statementTimeoutMs: number) => Math.max(60_000, statementTimeoutMs * 2)

const ignore = () => {}

/**
 * A pool whose connections can never crash the process. A pg client emits "error" when its
 * connection dies (the server restarted, or an administrator terminated it); an "error" event
 * with no listener is thrown as an uncaught exception. The pool listens while a connection is
 * idle, the SQL client while a query runs, but not in every moment between (CI saw one: a
 * connection terminated by the server while checked out between two listeners). So every
 * connection keeps one listener that does nothing for its whole life: queries still get their
 * errors through their callbacks, and the pool still drops a dead connection.
 */
export const guardedPool = (config: Pg.PoolConfig): Pg.Pool => {
  const pool = new Pg.Pool(config)
  // A connection that dies while idle in the pool is dropped by the pool; nothing to do here.
  pool.on("error", ignore)
  pool.on("connect", (client) => client.on("error", ignore))
  return pool
}

export const pgLayer = (
  url: string,
  options: PgOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> => {
  const statementTimeoutMs = Math.max(0, Math.floor(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS))
  const connectTimeoutMs = Math.max(1, Math.floor(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS))
  const acquire = Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const pool = guardedPool({
          connectionString: url,
          max: Math.max(1, Math.floor(options.poolSize ?? DEFAULT_POOL_SIZE)),
          connectionTimeoutMillis: connectTimeoutMs,
          idleTimeoutMillis: 30_000,
          application_name: "tenant-gateway",
          options: `-c statement_timeout=${statementTimeoutMs} ` +
            `-c idle_in_transaction_session_timeout=${idleInTransactionMs(statementTimeoutMs)}`
        })
        try {
          // Fail the start, not the first request, when the server is unreachable or refuses us.
          await pool.query("SELECT 1")
        } catch (error) {
          await pool.end().catch(() => {})
          throw error
        }
        return pool
      },
      catch: (cause) => new SqlError({ cause, message: `Cannot connect: ${(cause as Error)?.message ?? String(cause)}` })
    }),
    (pool) => Effect.promise(() => pool.end().catch(() => {})).pipe(Effect.timeoutOption(2000))
  )
  return Layer.scopedContext(
    Effect.map(
      PgClient.fromPool({ acquire, applicationName: "tenant-gateway" }),
      (client) => Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    )
  ).pipe(Layer.provide(Reactivity.layer))
}
