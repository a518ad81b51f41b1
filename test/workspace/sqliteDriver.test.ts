/**
 * The embedded store's SQLite connection (src/workspace/embedded/sqliteDriver.ts) against
 * @libsql/client's local `execute`, which it replaced: the same rows by name, values, counts and
 * errors for the same statements, and a statement prepared once however often it runs.
 */
import { createClient } from "@libsql/client"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteConnection } from "../../src/workspace/embedded/sqliteDriver.js"

const dir = mkdtempSync(join(tmpdir(), "sqlite-driver-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const STATEMENTS: ReadonlyArray<{ readonly sql: string; readonly args?: ReadonlyArray<unknown> }> = [
  { sql: "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, big INTEGER, data BLOB, r REAL)" },
  { sql: "INSERT INTO t (name, big, data, r) VALUES (?, ?, ?, ?)", args: ["a", 1, new Uint8Array([1, 2, 3]).buffer, 1.5] },
  { sql: "INSERT INTO t (name, big, data, r) VALUES (?, ?, ?, ?)", args: ["b\u00e9\ud83d\ude00", 9007199254740991n, null, true] },
  { sql: "INSERT INTO t (name, big) VALUES (?, ?) RETURNING id, name", args: ["c", -5] },
  { sql: "SELECT * FROM t ORDER BY id" },
  { sql: "SELECT * FROM t WHERE id > ? ORDER BY id", args: [1] },
  { sql: "SELECT id, name AS id, big AS __proto__, r FROM t ORDER BY id" },
  { sql: "SELECT name FROM t WHERE id = ?", args: [42] },
  { sql: "UPDATE t SET big = big + 1 WHERE id = ?", args: [1] },
  { sql: "INSERT INTO t (name) VALUES (?)", args: ["a"] },
  { sql: "SELECT nope FROM t" },
  { sql: "INSERT INTO t (name, big) VALUES (?, ?)", args: ["huge", 9223372036854775807n] },
  { sql: "SELECT big FROM t WHERE name = ?", args: ["huge"] },
  { sql: "SELECT ?", args: [undefined] },
  { sql: "SELECT ?", args: [Number.NaN] },
  { sql: "DELETE FROM t WHERE name = ?", args: ["huge"] },
  { sql: "SELECT * FROM t ORDER BY id" }
]

/** What a caller can see of an outcome: the rows' own enumerable keys and values, counts, or the error. */
const outcome = (run: () => Promise<{ rows: ReadonlyArray<object>; rowsAffected: number; lastInsertRowid?: bigint | undefined }>) =>
  run().then(
    (r) => ({
      rows: r.rows.map((row) => Object.entries(row).map(([k, v]) => [k, v instanceof ArrayBuffer ? [...new Uint8Array(v)] : v])),
      prototypes: r.rows.map((row) => Object.getPrototypeOf(row) === Object.prototype),
      rowsAffected: r.rowsAffected,
      lastInsertRowid: r.lastInsertRowid
    }),
    (e: Error & { code?: string; extendedCode?: string; rawCode?: number }) => ({
      error: { name: e.name, message: e.message, code: e.code, extendedCode: e.extendedCode, rawCode: e.rawCode }
    })
  )

describe("the embedded store's SQLite connection", () => {
  it("answers every statement as @libsql/client's execute did", async () => {
    const ours = new SqliteConnection(join(dir, "ours.db"))
    const theirs = createClient({ url: pathToFileURL(join(dir, "theirs.db")).href })
    try {
      for (const stmt of STATEMENTS) {
        const a = await outcome(async () => ours.execute(stmt))
        const b = await outcome(() => theirs.execute({ sql: stmt.sql, args: (stmt.args ?? []) as Array<never> }))
        expect({ sql: stmt.sql, ...a }).toEqual({ sql: stmt.sql, ...b })
      }
    } finally {
      ours.close()
      theirs.close()
    }
  })

  it("prepares a statement once however often it runs, and again after it failed", () => {
    const connection = new SqliteConnection(join(dir, "prepared.db"))
    try {
      connection.execute("CREATE TABLE u (id INTEGER PRIMARY KEY, name TEXT UNIQUE)")
      const prepare = (connection as unknown as { db: { prepare: (sql: string) => unknown } }).db
      const original = prepare.prepare.bind(prepare)
      const prepared: Array<string> = []
      prepare.prepare = (sql: string) => {
        prepared.push(sql)
        return original(sql)
      }
      const insert = "INSERT INTO u (name) VALUES (?)"
      for (let i = 0; i < 5; i++) connection.execute({ sql: insert, args: [`n${i}`] })
      for (let i = 0; i < 5; i++) expect(connection.execute({ sql: "SELECT name FROM u WHERE id = ?", args: [i + 1] }).rows).toEqual([{ name: `n${i}` }])
      expect(prepared).toEqual([insert, "SELECT name FROM u WHERE id = ?"])
      expect(() => connection.execute({ sql: insert, args: ["n0"] })).toThrow(/SQLITE_CONSTRAINT/)
      connection.execute({ sql: insert, args: ["n5"] })
      expect(prepared).toEqual([insert, "SELECT name FROM u WHERE id = ?", insert])
      // The values of a row in column order, as executeValues gives them.
      expect(connection.execute("SELECT id, name FROM u WHERE id = 6").values).toEqual([[6, "n5"]])
    } finally {
      connection.close()
    }
  })
})
