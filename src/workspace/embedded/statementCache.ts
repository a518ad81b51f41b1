/**
 * Prepared statements kept per connection. @libsql/client prepares every statement again on
 * every call (its local client has no cache): 12.5% of the workspace service's CPU per task-board
 * call (three statements, about 28 us each to prepare). Installed once on the `libsql` driver's
 * Database class, which @libsql/client uses: each connection keeps its last STATEMENTS_PER_CONNECTION
 * statements by their text.
 *
 * Long texts (multi-row inserts, whose texts vary with the row count) are kept apart and briefly:
 * the last LONG_PER_CONNECTION of them, each dropped once unused for LONG_IDLE_MS. Preparing a
 * 500-row insert of 8 columns takes 1.3-1.7 ms and the statement holds about 0.9 KB per row (0.8
 * MB for 900 rows), so an ingest that repeats a shape (batches of the same row count, the full
 * groups of a large batch: ./insertGroups.ts) prepares it once while it lasts, and an idle cell
 * does not keep the memory: 1,000 rows of 2 KB in two groups, 18.4-20.1 -> 15.1-16.8 ms of CPU on
 * the driver alone.
 *
 * Not kept: a text with `*` (its columns come from the schema as it is when prepared, and the
 * driver reads a reused statement's columns before SQLite re-prepares it after another process
 * changed the table).
 * A kept statement is the driver's own object, reused as the driver allows: each run binds its
 * arguments, steps and resets it; a run that failed leaves it usable. It comes back with the
 * modes its last user set (raw rows, safe integers), which @libsql/client sets on every call;
 * pluck (the driver's `pragma` helper sets it) is turned off. The driver has no way to finalize a
 * statement, so a connection the store closes (after SQLITE_BUSY, ./libsql.ts) stays open in the
 * driver, with its file descriptors, until the collector takes its kept statements: a full
 * collection (npm start runs one when the process is idle: collectWhenProcessIdle in
 * src/http/server/nodeServer.ts), where a fresh statement went with the next young one.
 * Measured on the workspace service's task board (`bench/experiments/s2-board.ts`, 6 rounds):
 * 685 -> 518 us of CPU per call (1.32x).
 */
import { createRequire } from "node:module"

const STATEMENTS_PER_CONNECTION = 128
const LONGEST_KEPT = 2_000
const LONG_PER_CONNECTION = 3
/** Below the idle collection's 10 s (SVC_IDLE_COLLECT_MS), so the statements it finds unused are gone. */
export const LONG_IDLE_MS = 5_000

interface Statement {
  pluck(on: boolean): unknown
}

interface Prepares {
  prepare(sql: string): Statement
}

interface Kept {
  readonly short: Map<string, Statement>
  readonly long: Map<string, { readonly statement: Statement; usedAt: number }>
  sweep: ReturnType<typeof setTimeout> | undefined
}

const kept = new WeakMap<object, Kept>()
const INSTALLED = Symbol.for("tenant-gateway/statementCache")

/** Most recently used last: the first is the one to drop. */
const touch = <V>(map: Map<string, V>, sql: string, value: V) => {
  map.delete(sql)
  map.set(sql, value)
}

/** Drops the long statements unused for LONG_IDLE_MS; looks again while some remain. */
const sweepLong = (connection: Kept) => {
  connection.sweep = undefined
  const stale = Date.now() - LONG_IDLE_MS
  for (const [sql, entry] of connection.long) if (entry.usedAt <= stale) connection.long.delete(sql)
  if (connection.long.size > 0) scheduleSweep(connection)
}

const scheduleSweep = (connection: Kept) => {
  if (connection.sweep !== undefined) return
  connection.sweep = setTimeout(sweepLong, LONG_IDLE_MS, connection)
  connection.sweep.unref()
}

export const installStatementCache = (): void => {
  const Database = createRequire(createRequire(import.meta.url).resolve("@libsql/client"))("libsql") as {
    prototype: Prepares & { [INSTALLED]?: true }
  }
  const proto = Database.prototype
  if (proto[INSTALLED] === true) return
  const prepare = proto.prepare
  proto.prepare = function(this: object, sql: string) {
    if (typeof sql !== "string" || sql.includes("*")) return prepare.call(this, sql)
    let connection = kept.get(this)
    if (connection === undefined) kept.set(this, connection = { short: new Map(), long: new Map(), sweep: undefined })
    if (sql.length > LONGEST_KEPT) {
      const found = connection.long.get(sql)
      if (found !== undefined) {
        found.usedAt = Date.now()
        touch(connection.long, sql, found)
        found.statement.pluck(false)
        return found.statement
      }
      const statement = prepare.call(this, sql)
      connection.long.set(sql, { statement, usedAt: Date.now() })
      if (connection.long.size > LONG_PER_CONNECTION) connection.long.delete(connection.long.keys().next().value!)
      scheduleSweep(connection)
      return statement
    }
    const found = connection.short.get(sql)
    if (found !== undefined) {
      touch(connection.short, sql, found)
      found.pluck(false)
      return found
    }
    const statement = prepare.call(this, sql)
    connection.short.set(sql, statement)
    if (connection.short.size > STATEMENTS_PER_CONNECTION) connection.short.delete(connection.short.keys().next().value!)
    return statement
  }
  Object.defineProperty(proto, INSTALLED, { value: true })
}
