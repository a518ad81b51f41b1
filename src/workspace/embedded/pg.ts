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
import { readFileSync } from "node:fs"
import type { ConnectionOptions } from "node:tls"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as Redacted from "effect/Redacted"
import * as SqlClient from "effect/sql/SqlClient"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_POOL_SIZE, DEFAULT_STATEMENT_TIMEOUT_MS, type PgOptions } from "./pgUrl.js"
import { DEFAULT_BUSY_TIMEOUT_MS } from "./db.js"

export * from "./pgUrl.js"

/** Idle-in-transaction bound: a transaction nobody drives any more gives up its row locks. */
const idleInTransactionMs = (statementTimeoutMs: number) => Math.max(60_000, statementTimeoutMs * 2)

/** URL parameters read here (TLS) and kept from the driver, which would read them otherwise. */
const TLS_PARAMS = ["ssl", "sslmode", "sslrootcert", "sslcert", "sslkey", "uselibpqcompat"] as const

/**
 * The TLS of `url` as node-postgres 8 (the driver before Effect 4, pg-connection-string 2.14) read
 * it, the semantics the README documents; @effect/sql-pg 4 reads `sslmode` the libpq way for
 * `prefer`/`allow` (TLS optional), ignores `sslrootcert`/`sslcert`/`sslkey`/`uselibpqcompat`, and
 * refuses `no-verify`, so the URL's TLS parameters are read here and given as its `ssl` option:
 * - `sslmode=disable`, or none and no `sslrootcert`/`sslcert`/`sslkey`: no TLS (`ssl=true`/`1`:
 *   TLS, checked; `ssl=no-verify`: TLS, unchecked);
 * - `verify-full`, and `prefer`/`require`/`verify-ca` (a SECURITY WARNING at start): TLS, the
 *   certificate and the host name checked; `no-verify`: TLS, nothing checked;
 * - `uselibpqcompat=true`: libpq's meaning: `prefer`/`require` TLS unchecked (`require` with
 *   `sslrootcert`: chain checked, name not), `verify-ca` chain only (needs `sslrootcert`);
 * - `sslrootcert`/`sslcert`/`sslkey`: files read at start (the CA, a client certificate and key).
 * TLS is never optional: a server without it ends the start.
 */
export const tlsOptionsOf = (url: string): boolean | ConnectionOptions => {
  const params = new URL(url).searchParams
  const get = (name: (typeof TLS_PARAMS)[number]) => params.get(name) ?? undefined
  const sslmode = get("sslmode")
  const sslrootcert = get("sslrootcert")
  const sslcert = get("sslcert")
  const sslkey = get("sslkey")
  const ssl = get("ssl")
  if (!sslmode && !sslrootcert && !sslcert && !sslkey) {
    return ssl === "no-verify" ? { rejectUnauthorized: false } : ssl === "true" || ssl === "1"
  }
  const options: ConnectionOptions = {}
  if (sslcert) options.cert = readFileSync(sslcert).toString()
  if (sslkey) options.key = readFileSync(sslkey).toString()
  if (sslrootcert) options.ca = readFileSync(sslrootcert).toString()
  const noIdentityCheck = () => undefined
  if (get("uselibpqcompat") === "true") {
    switch (sslmode) {
      case "disable":
        return false
      case "prefer":
        options.rejectUnauthorized = false
        break
      case "require":
        if (sslrootcert) options.checkServerIdentity = noIdentityCheck
        else options.rejectUnauthorized = false
        break
      case "verify-ca":
        if (!sslrootcert) {
          throw new Error(
            "sslmode=verify-ca requires a CA in sslrootcert (with a public CA, verify-ca accepts any server " +
              "somebody registered with it); give sslrootcert or use sslmode=verify-full"
          )
        }
        options.checkServerIdentity = noIdentityCheck
        break
    }
    return options
  }
  switch (sslmode) {
    case "disable":
      return false
    case "prefer":
    case "require":
    case "verify-ca":
      process.emitWarning(
        `SECURITY WARNING: sslmode=${sslmode} is treated as sslmode=verify-full (the server's certificate and ` +
          `name are checked). To say so, use sslmode=verify-full; for libpq's meaning (weaker), ` +
          `use uselibpqcompat=true&sslmode=${sslmode}.`
      )
      break
    case "no-verify":
      options.rejectUnauthorized = false
      break
  }
  return options
}

/** `url` without the TLS parameters (./pg.ts gives them as options). */
const withoutTlsParams = (url: string): string => {
  const u = new URL(url)
  for (const name of TLS_PARAMS) u.searchParams.delete(name)
  return u.toString()
}

/**
 * Connections that LISTEN for as long as the store runs, one each for the signal relay
 * (./outbox.ts) and the webhook deliveries (./webhookDelivery.ts): @effect/sql-pg reserves them
 * from the pool, so the pool holds them besides `poolSize`. Taken from it, they left a pool of 2
 * no connection for a write, which then waited for ever.
 */
export const LISTENING_CONNECTIONS = 2

/**
 * PgClient and SqlClient on `url`: `poolSize` connections for queries, and the listening ones. @effect/sql-pg 4 speaks the protocol itself (no node-postgres):
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
  const lockTimeoutMs = Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))
  return Layer.effectContext(
    Effect.gen(function*() {
      const ssl = yield* Effect.try({
        try: () => tlsOptionsOf(url),
        catch: (cause) =>
          new SqlError({ reason: new ConnectionError({ cause, message: `Cannot connect: ${(cause as Error).message}` }) })
      })
      const client = yield* PgClient.make({
        url: Redacted.make(withoutTlsParams(url)),
        ssl,
        maxConnections: Math.max(1, Math.floor(options.poolSize ?? DEFAULT_POOL_SIZE)) + LISTENING_CONNECTIONS,
        connectTimeout: Duration.millis(connectTimeoutMs),
        idleTimeout: Duration.seconds(30),
        applicationName: "tenant-gateway",
        // lock_timeout: a write waits for another transaction's lock (a task's row, a key's
        // advisory lock) as long as SQLite waits for the file (SVC_DB_BUSY_TIMEOUT_MS), then 503
        // (55P03 reads as busy): behind a replica frozen mid-write every write to that task
        // waited for statement_timeout (30 s), past the request's deadline of 15 s.
        startupOptions: `-c statement_timeout=${statementTimeoutMs} -c lock_timeout=${lockTimeoutMs} ` +
          `-c idle_in_transaction_session_timeout=${idleInTransactionMs(statementTimeoutMs)}`
      })
      yield* client`SELECT 1`
      return Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))
    })
  ).pipe(Layer.provide(Reactivity.layer))
}
