/**
 * Prepared statements kept per connection (src/workspace/embedded/statementCache.ts): the same
 * text on one connection is prepared once; what is not kept; a kept statement after a failed run
 * and after another connection changed the table, through @libsql/client as the store uses it.
 */
import { createClient } from "@libsql/client/sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { installStatementCache } from "../../src/workspace/embedded/statementCache.js"

installStatementCache()
const Database = createRequire(createRequire(import.meta.url).resolve("@libsql/client"))("libsql") as new(path: string) => {
  prepare(sql: string): object
  close(): void
}

const dir = mkdtempSync(join(tmpdir(), "statement-cache-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("prepared statements kept per connection", () => {
  it("one connection: the same text is the same statement; another connection has its own", () => {
    const a = new Database(join(dir, "a.db"))
    const b = new Database(join(dir, "a.db"))
    const sql = "SELECT 1 AS one"
    expect(a.prepare(sql)).toBe(a.prepare(sql))
    expect(b.prepare(sql)).not.toBe(a.prepare(sql))
    a.close()
    b.close()
  })

  it("not kept: a text with *, a long text, a multi-row insert; the least recently used past 128", () => {
    const db = new Database(join(dir, "b.db"))
    expect(db.prepare("SELECT * FROM sqlite_master")).not.toBe(db.prepare("SELECT * FROM sqlite_master"))
    const long = `SELECT ${Array.from({ length: 400 }, (_, i) => `${i} AS c${i}`).join(", ")}`
    expect(long.length).toBeGreaterThan(2_000)
    expect(db.prepare(long)).not.toBe(db.prepare(long))
    // A multi-row insert, however short: each row count its own text, each holding its last values.
    const create = db.prepare("CREATE TABLE IF NOT EXISTS m (a TEXT)") as { run(): unknown }
    create.run()
    const rows = "INSERT INTO m (a) VALUES (?),(?),(?)"
    expect(db.prepare(rows)).not.toBe(db.prepare(rows))
    const row = "INSERT INTO m (a) VALUES (?)"
    expect(db.prepare(row)).toBe(db.prepare(row))
    const first = db.prepare("SELECT 0 AS n")
    const recent = db.prepare("SELECT 1 AS n")
    for (let i = 2; i < 129; i++) {
      db.prepare(`SELECT ${i} AS n`)
      db.prepare("SELECT 1 AS n") // used again: stays
    }
    expect(db.prepare("SELECT 1 AS n")).toBe(recent)
    expect(db.prepare("SELECT 0 AS n")).not.toBe(first)
    // Pluck mode (the driver's pragma helper) does not follow a statement into its next use.
    const pair = db.prepare("SELECT 5 AS a, 6 AS b") as { pluck(on?: boolean): { all(): unknown } }
    expect(pair.pluck().all()).toEqual([5])
    expect((db.prepare("SELECT 5 AS a, 6 AS b") as { all(): unknown }).all()).toEqual([{ a: 5, b: 6 }])
    db.close()
  })

  it("through @libsql/client: right answers after a failed run, and after another connection changed the table", async () => {
    const url = `file:${join(dir, "c.db")}`
    const client = createClient({ url })
    const other = createClient({ url })
    await client.execute("CREATE TABLE t (id TEXT PRIMARY KEY, v TEXT NOT NULL)")
    const insert = "INSERT INTO t (id, v) VALUES (?, ?)"
    const select = "SELECT id, v FROM t ORDER BY id"
    await client.execute({ sql: insert, args: ["a", "1"] })
    await expect(client.execute({ sql: insert, args: ["a", "2"] })).rejects.toThrow(/UNIQUE|PRIMARY/)
    await expect(client.execute({ sql: insert, args: ["b", null] })).rejects.toThrow(/NOT NULL/)
    await client.execute({ sql: insert, args: ["b", "3"] })
    expect((await client.execute(select)).rows.map((r) => [r.id, r.v])).toEqual([["a", "1"], ["b", "3"]])
    // Another connection adds a column and rebuilds the table with the columns in another order.
    await other.execute("ALTER TABLE t ADD COLUMN w TEXT")
    expect((await client.execute(select)).rows.map((r) => [r.id, r.v])).toEqual([["a", "1"], ["b", "3"]])
    await other.batch([
      "CREATE TABLE t2 (w TEXT, v TEXT NOT NULL, id TEXT PRIMARY KEY)",
      "INSERT INTO t2 (w, v, id) SELECT w, v, id FROM t",
      "DROP TABLE t",
      "ALTER TABLE t2 RENAME TO t"
    ], "write")
    const rows = (await client.execute(select)).rows
    expect(rows.map((r) => [r.id, r.v])).toEqual([["a", "1"], ["b", "3"]])
    expect(rows.map((r) => Object.keys(r))).toEqual([["id", "v"], ["id", "v"]])
    await client.execute({ sql: insert, args: ["c", "4"] })
    expect((await other.execute("SELECT id, v FROM t ORDER BY id")).rows.map((r) => [r.id, r.v])).toEqual([["a", "1"], ["b", "3"], ["c", "4"]])
    client.close()
    other.close()
  })
})
