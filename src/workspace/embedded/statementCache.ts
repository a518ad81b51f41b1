/**
 * Prepared statements kept per connection. @libsql/client prepares every statement again on
 * every call (its local client has no cache): 12.5% of the workspace service's CPU per task-board
 * call (three statements, about 28 us each to prepare). Installed once on the `libsql` driver's
 * Database class, which @libsql/client uses: each connection keeps its last STATEMENTS_PER_CONNECTION
 * statements by their text.
 *
 * Not kept: a text with `*` (its columns come from the schema as it is when prepared, and the
 * driver reads a reused statement's columns before SQLite re-prepares it after another process
 * changed the table), and long texts (multi-row inserts: their texts vary with the row count).
 * Keeping the last three long ones for 5 s saved S5 3% of its CPU (1.3-1.7 ms to prepare 500
 * rows), but a statement that lives past a young collection is freed only by a full one, whose
 * timing V8 decides without seeing the statement's native memory (about 0.9 KB a row, plus the
 * values of its last run, which SQLite keeps bound): batches of 300 sizes in turn took RSS from
 * 225 to 912 MB over 9,000 batches, 743 MB after the idle collection (malloc kept the freed,
 * fragmented memory); unkept, each dies with the next young collection. For the same reason no
 * multi-row insert is kept, however short (`),(` in its text: up to 105 rows fit in 2,000
 * characters, each shape its own text, each holding its last group's values, up to 1 MiB of
 * text: ./insertGroups.ts).
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

interface Statement {
  pluck(on: boolean): unknown
}

interface Prepares {
  prepare(sql: string): Statement
}

const kept = new WeakMap<object, Map<string, Statement>>()
const INSTALLED = Symbol.for("tenant-gateway/statementCache")

export const installStatementCache = (): void => {
  const Database = createRequire(createRequire(import.meta.url).resolve("@libsql/client"))("libsql") as {
    prototype: Prepares & { [INSTALLED]?: true }
  }
  const proto = Database.prototype
  if (proto[INSTALLED] === true) return
  const prepare = proto.prepare
  proto.prepare = function(this: object, sql: string) {
    if (typeof sql !== "string" || sql.length > LONGEST_KEPT || sql.includes("*") || sql.includes("),(")) {
      return prepare.call(this, sql)
    }
    let statements = kept.get(this)
    if (statements === undefined) kept.set(this, statements = new Map())
    const found = statements.get(sql)
    if (found !== undefined) {
      // Most recently used last: the first is the one to drop.
      statements.delete(sql)
      statements.set(sql, found)
      found.pluck(false)
      return found
    }
    const statement = prepare.call(this, sql)
    statements.set(sql, statement)
    if (statements.size > STATEMENTS_PER_CONNECTION) statements.delete(statements.keys().next().value!)
    return statement
  }
  Object.defineProperty(proto, INSTALLED, { value: true })
}
