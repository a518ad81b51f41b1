/**
 * One SQLite connection on the `libsql` driver, executing statements as @libsql/client's local
 * `execute` does (same values bound, same values read, same errors) without its per-call costs,
 * which were most of the workspace service's CPU per task board (bench/PROFILE.md, S2):
 * - each statement is prepared once per connection (a bounded cache keyed by its SQL) instead
 *   of on every call;
 * - rows are read as arrays and become plain objects by ordinary assignment, instead of an
 *   object with a defineProperty per cell (an index and a name each), which V8 keeps in its
 *   slow dictionary form.
 * Rows are plain objects with the columns as enumerable properties (what callers read; the
 * client's rows also had non-enumerable indices and `length`, which nothing here reads: the
 * arrays are `values`).
 */
import Database from "libsql"
import { LibsqlError } from "@libsql/client/sqlite3"

export interface SqlStatement {
  readonly sql: string
  readonly args?: ReadonlyArray<unknown>
}

export interface SqlResult {
  readonly columns: ReadonlyArray<string>
  /** Each row by column name (the first of two equal names wins, as in @libsql/client). */
  readonly rows: ReadonlyArray<Record<string, unknown>>
  /** Each row as its values in column order. */
  readonly values: ReadonlyArray<ReadonlyArray<unknown>>
  readonly rowsAffected: number
  readonly lastInsertRowid: bigint | undefined
}

export const EMPTY_RESULT: SqlResult = { columns: [], rows: [], values: [], rowsAffected: 0, lastInsertRowid: undefined }

/** Prepared statements kept per connection (the least recently used one goes first). */
export const STATEMENT_CACHE_SIZE = 100

interface Prepared {
  readonly statement: Database.Statement<Array<unknown>>
  /** raw() refuses a statement that returns no data (an INSERT without RETURNING, a PRAGMA that sets). */
  readonly returnsData: boolean
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER)
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)
const MIN_INTEGER = -9223372036854775808n
const MAX_INTEGER = 9223372036854775807n

/** A bound value as @libsql/client binds it (intMode "number"). */
const valueToSql = (value: unknown): unknown => {
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError("Only finite numbers (not Infinity or NaN) can be passed as arguments")
    return value
  }
  if (typeof value === "bigint") {
    if (value < MIN_INTEGER || value > MAX_INTEGER) {
      throw new RangeError("bigint is too large to be represented as a 64-bit integer and passed as argument")
    }
    return value
  }
  if (typeof value === "boolean") return value ? 1 : 0
  if (value instanceof ArrayBuffer) return Buffer.from(value)
  if (value instanceof Date) return value.valueOf()
  if (value === undefined) throw new TypeError("undefined cannot be passed as argument to the database")
  return value
}

/** A read value as @libsql/client gives it (intMode "number"): integers as numbers, blobs as ArrayBuffers. */
const valueFromSql = (value: unknown): unknown => {
  if (typeof value === "bigint") {
    if (value < MIN_SAFE || value > MAX_SAFE) {
      throw new RangeError("Received integer which cannot be safely represented as a JavaScript number")
    }
    return Number(value)
  }
  if (value instanceof Buffer) return value.buffer
  return value
}

const SQLITE_ERROR_CODES: Record<number, string> = {
  1: "SQLITE_ERROR",
  2: "SQLITE_INTERNAL",
  3: "SQLITE_PERM",
  4: "SQLITE_ABORT",
  5: "SQLITE_BUSY",
  6: "SQLITE_LOCKED",
  7: "SQLITE_NOMEM",
  8: "SQLITE_READONLY",
  9: "SQLITE_INTERRUPT",
  10: "SQLITE_IOERR",
  11: "SQLITE_CORRUPT",
  12: "SQLITE_NOTFOUND",
  13: "SQLITE_FULL",
  14: "SQLITE_CANTOPEN",
  15: "SQLITE_PROTOCOL",
  16: "SQLITE_EMPTY",
  17: "SQLITE_SCHEMA",
  18: "SQLITE_TOOBIG",
  19: "SQLITE_CONSTRAINT",
  20: "SQLITE_MISMATCH",
  21: "SQLITE_MISUSE",
  22: "SQLITE_NOLFS",
  23: "SQLITE_AUTH",
  24: "SQLITE_FORMAT",
  25: "SQLITE_RANGE",
  26: "SQLITE_NOTADB",
  27: "SQLITE_NOTICE",
  28: "SQLITE_WARNING"
}

/** The driver's error as @libsql/client reports it: a LibsqlError with the base code, the extended one and the number. */
const mapError = (error: unknown): unknown => {
  if (!(error instanceof Database.SqliteError)) return error
  const { code: extendedCode, rawCode } = error as unknown as { code: string; rawCode?: number }
  const code = rawCode === undefined
    ? "SQLITE_UNKNOWN"
    : SQLITE_ERROR_CODES[rawCode & 0xff] ?? `SQLITE_UNKNOWN_${(rawCode & 0xff).toString()}`
  return new LibsqlError(error.message, code, extendedCode, rawCode, error)
}

/** A column name that plain assignment would not make an own data property of a fresh object. */
const unsafeName = (name: string) => name === "__proto__"

export class SqliteConnection {
  private readonly db: Database.Database
  private readonly statements = new Map<string, Prepared>()

  /** Opens the file and reads from it once, so a path that is no database fails here (the open's own error as the driver throws it). */
  constructor(path: string) {
    this.db = new Database(path)
    this.execute({ sql: "SELECT 1 AS checkThatTheDatabaseCanBeOpened" })
  }

  private prepare(sql: string): Prepared {
    const cached = this.statements.get(sql)
    if (cached !== undefined) {
      // Most recently used last: the first key is the one to drop.
      this.statements.delete(sql)
      this.statements.set(sql, cached)
      return cached
    }
    const statement = this.db.prepare(sql) as Database.Statement<Array<unknown>>
    statement.safeIntegers(true)
    let returnsData = true
    try {
      statement.raw(true)
    } catch {
      returnsData = false
    }
    const prepared = { statement, returnsData }
    if (this.statements.size >= STATEMENT_CACHE_SIZE) this.statements.delete(this.statements.keys().next().value!)
    this.statements.set(sql, prepared)
    return prepared
  }

  /** Runs one statement to its end. */
  execute(stmt: SqlStatement | string): SqlResult {
    const sql = typeof stmt === "string" ? stmt : stmt.sql
    const args = typeof stmt === "string" || stmt.args === undefined ? [] : stmt.args.map(valueToSql)
    let prepared: Prepared | undefined
    try {
      prepared = this.prepare(sql)
      const { returnsData, statement } = prepared
      if (!returnsData) {
        const info = statement.run(args)
        return { columns: [], rows: [], values: [], rowsAffected: info.changes, lastInsertRowid: BigInt(info.lastInsertRowid) }
      }
      // Columns read on every run: a schema change (another process's migration) re-prepares the
      // statement with other columns.
      const columns = statement.columns().map((c) => c.name)
      const values = statement.all(args) as Array<Array<unknown>>
      const rows: Array<Record<string, unknown>> = new Array(values.length)
      const plain = new Set(columns).size === columns.length && !columns.some(unsafeName)
      for (let r = 0; r < values.length; r++) {
        const value = values[r]!
        const row: Record<string, unknown> = {}
        for (let i = 0; i < value.length; i++) {
          const v = valueFromSql(value[i])
          value[i] = v
          const name = columns[i]!
          if (plain) row[name] = v
          else if (!Object.hasOwn(row, name)) {
            Object.defineProperty(row, name, { value: v, enumerable: true, configurable: true, writable: true })
          }
        }
        rows[r] = row
      }
      return { columns, rows, values, rowsAffected: 0, lastInsertRowid: undefined }
    } catch (error) {
      // A statement that failed may be left mid-run (SQLITE_BUSY leaves it "in progress"): it is
      // not used again.
      if (prepared !== undefined) this.statements.delete(sql)
      throw mapError(error)
    }
  }

  /** A PRAGMA that sets something; a failure is ignored (the setting stays as it was). */
  pragma(setting: string): void {
    try {
      this.db.exec(`PRAGMA ${setting}`)
    } catch {
      // As before: the connection works with SQLite's default.
    }
  }

  close(): void {
    this.statements.clear()
    this.db.close()
  }
}
