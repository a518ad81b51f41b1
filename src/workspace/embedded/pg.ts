/**
 * The SqlClient for the workspace on PostgreSQL (@effect/sql-pg's own protocol client and pool), the
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
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, type PgOptions } from "./pgUrl.js"

export * from "./pgUrl.js"

/** Idle-in-transaction bound: a transaction nobody drives any more gives up its row locks. */
const idleInTransactionMs = (statementTimeoutMs: number) => Math.max(60_000, statementTimeoutMs * 2)

/**
 * PgClient and SqlClient on `url`. @effect/sql-pg 4 speaks the protocol itself (no node-postgres):
 * a connection that dies fails its own queries and is dropped by the pool; nothing is thrown
 * outside them. The start fails, not the first request, when the server is unreachable or
 * refuses us: one query runs before the layer is up.
 */
export const pgLayer = (
  url: string,
  options: PgOptions = {}
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> => {
  const statementTimeoutMs = Math.max(0, Math.floor(options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS))
  const connectTimeoutMs = Math.max(1, Math.floor(options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS))
  return Layer.effectContext(
    Effect.gen(function*() {
      const client = yield* PgClient.make({
        url: Redacted.make(url),
        maxConnections: Math.max(1, Math.floor(options.poolSize ?? DEFAULT_POOL_SIZE)),
        connectTimeout: Duration.millis(connectTimeoutMs),
        idleTimeout: Duration.seconds(30),
        applicationName: "tenant-gateway",
        startupOptions: `-c statement_timeout=${statementTimeoutMs} ` +
          `-c idle_in_transaction_session_timeout=${idleInTransactionMs(statementTimeoutMs)}`
      })
      yield* client`SELECT 1`
      return Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))
}
