/**
 * What the start-up needs to know of a PostgreSQL URL before any driver is loaded: whether it is
 * one, how to print it, and the pool's defaults. The driver and its layer (./pg.ts) are imported
 * only when SVC_DATABASE_URL is a postgres:// URL: a SQLite process never loads node-postgres.
 */
import { defaultOf } from "../../config/settings.js"

export const DEFAULT_POOL_SIZE = defaultOf("SVC_DB_POOL_SIZE")
export const DEFAULT_STATEMENT_TIMEOUT_MS = defaultOf("SVC_DB_STATEMENT_TIMEOUT_MS")
export const DEFAULT_CONNECT_TIMEOUT_MS = defaultOf("SVC_DB_CONNECT_TIMEOUT_MS")

export interface PgOptions {
  /** Connections this process opens at most (SVC_DB_POOL_SIZE). */
  readonly poolSize?: number | undefined
  /** A statement running longer is cancelled (answers 503); 0 = no limit (SVC_DB_STATEMENT_TIMEOUT_MS). */
  readonly statementTimeoutMs?: number | undefined
  /** How long opening a connection may take (SVC_DB_CONNECT_TIMEOUT_MS). */
  readonly connectTimeoutMs?: number | undefined
  /** How long a statement waits for a lock another transaction holds (SVC_DB_BUSY_TIMEOUT_MS); 0 = no limit. */
  readonly busyTimeoutMs?: number | undefined
}

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//i.test(url)

/** The URL without its password, for logs and start-up messages. */
export const redactUrl = (url: string): string => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "postgres://(unparsable URL)"
  }
}
