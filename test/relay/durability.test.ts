/**
 * Commit durability off the event loop (src/workspace/embedded/walSync.ts, libsql.ts): the
 * gateway's SQLite connections commit with synchronous=NORMAL (the COMMIT writes the log without
 * syncing it) and every result of the store waits for an fdatasync of the log run through the
 * thread pool. Here the sync is held back to see who waits for it: a transaction, an autocommit
 * write, a read that may see an unsynced commit; commits that finish while a sync runs share the
 * next one; a failed sync fails the write. And the real sync keeps its handle on the log's
 * current file.
 */
import { createClient } from "@libsql/client"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync, readdirSync, readlinkSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { libsqlLayer } from "../../src/workspace/embedded/libsql.js"
import { makeWalSync } from "../../src/workspace/embedded/walSync.js"
import { waitFor } from "../support/waitFor.js"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const tempDb = () => {
  const dir = mkdtempSync(join(tmpdir(), "svc-durable-"))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return join(dir, "db.sqlite")
}

/** A stand-in for the log's fdatasync: passes at once unless held; held syncs settle on `release`/`fail`. */
const heldSync = () => {
  let hold = false
  let calls = 0
  const pending: Array<{ resolve: () => void; reject: (e: unknown) => void }> = []
  return {
    syncFile: () => {
      calls++
      return hold ? new Promise<void>((resolve, reject) => pending.push({ resolve, reject })) : Promise.resolve()
    },
    hold: (on: boolean) => void (hold = on),
    calls: () => calls,
    running: () => pending.length,
    release: () => pending.splice(0).forEach((p) => p.resolve()),
    fail: (e: Error) => pending.splice(0).forEach((p) => p.reject(e))
  }
}

/** The store's SqlClient on a file, with `sync` as its log sync; closed after the test. */
const openStore = async (file: string, sync: ReturnType<typeof heldSync>) => {
  const scope = Effect.runSync(Scope.make())
  cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  const context = await Effect.runPromise(
    Scope.provide(Layer.build(libsqlLayer(`file:${file}`, { path: file, checkpointIntervalMs: 0, syncFile: sync.syncFile })), scope)
  )
  const sql = context.mapUnsafe.get(SqlClient.SqlClient.key) as SqlClient.SqlClient
  await Effect.runPromise(sql`CREATE TABLE t (n INTEGER)`)
  return sql
}

/** Runs `effect`, noting when it settles. */
const track = <A, E>(effect: Effect.Effect<A, E>) => {
  const state = { settled: false, exit: undefined as Exit.Exit<A, E> | undefined }
  const promise = Effect.runPromiseExit(effect).then((exit) => {
    state.settled = true
    state.exit = exit
    return exit
  })
  return { state, promise }
}

/** Rows of t as another connection sees them: committed, whether or not acknowledged. */
const committedRows = async (file: string) => {
  const other = createClient({ url: `file:${file}` })
  try {
    return (await other.execute("SELECT n FROM t ORDER BY n")).rows.map((r) => Number(r[0]))
  } finally {
    other.close()
  }
}

/** Turns of the event loop: a result that did not wait would have settled by then. */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r))
}

describe("commits are acknowledged only once the log is synced", () => {
  it("runs the gateway's connections with synchronous=NORMAL on a WAL file", async () => {
    const file = tempDb()
    const sql = await openStore(file, heldSync())
    const [mode] = await Effect.runPromise(sql<{ journal_mode: string }>`PRAGMA journal_mode`)
    const [sync] = await Effect.runPromise(sql<{ synchronous: number }>`PRAGMA synchronous`)
    const [inTx] = await Effect.runPromise(sql.withTransaction(sql<{ synchronous: number }>`PRAGMA synchronous`))
    expect(mode?.journal_mode).toBe("wal")
    expect(sync?.synchronous).toBe(1)
    expect(inTx?.synchronous).toBe(1)
  })

  it("a transaction's result waits for the sync; commits during a sync share the next one", async () => {
    const file = tempDb()
    const sync = heldSync()
    const sql = await openStore(file, sync)
    sync.hold(true)
    const before = sync.calls()
    const first = track(sql.withTransaction(sql`INSERT INTO t VALUES (1)`))
    await waitFor("the first commit's sync to start", () => sync.running() === 1)
    // Committed (another connection sees it), not acknowledged.
    expect(await committedRows(file)).toEqual([1])
    await turns()
    expect(first.state.settled).toBe(false)

    // Two more commits while that sync runs: neither is covered by it.
    const second = track(sql.withTransaction(sql`INSERT INTO t VALUES (2)`))
    const third = track(sql`INSERT INTO t VALUES (3)`)
    await waitFor("both to commit", async () => (await committedRows(file)).length === 3)
    await turns()
    expect([second.state.settled, third.state.settled]).toEqual([false, false])

    sync.release()
    await first.promise
    expect(Exit.isSuccess(first.state.exit!)).toBe(true)
    // One more sync for both, not one each.
    await waitFor("the next sync to start", () => sync.running() === 1)
    await turns()
    expect([second.state.settled, third.state.settled]).toEqual([false, false])
    sync.release()
    await Promise.all([second.promise, third.promise])
    expect(Exit.isSuccess(second.state.exit!) && Exit.isSuccess(third.state.exit!)).toBe(true)
    expect(sync.calls() - before).toBe(2)
  })

  it("a read that may see an unsynced commit waits for its sync; with everything synced it does not", async () => {
    const file = tempDb()
    const sync = heldSync()
    const sql = await openStore(file, sync)
    sync.hold(true)
    const write = track(sql.withTransaction(sql`INSERT INTO t VALUES (7)`))
    await waitFor("the commit's sync to start", () => sync.running() === 1)
    const read = track(sql<{ n: number }>`SELECT n FROM t`)
    await turns()
    expect(read.state.settled).toBe(false)
    sync.release()
    await Promise.all([write.promise, read.promise])
    expect(Exit.isSuccess(read.state.exit!) && read.state.exit.value).toEqual([{ n: 7 }])
    // Nothing unsynced now: a read neither waits nor syncs.
    const calls = sync.calls()
    expect(await Effect.runPromise(sql<{ n: number }>`SELECT n FROM t`)).toEqual([{ n: 7 }])
    expect(sync.calls()).toBe(calls)
  })

  it("a failed sync fails the write that waited for it (a SqlError: 503 at the store's boundary), and every result after it", async () => {
    const file = tempDb()
    const sync = heldSync()
    const sql = await openStore(file, sync)
    sync.hold(true)
    const write = track(sql.withTransaction(sql`INSERT INTO t VALUES (1)`))
    await waitFor("the commit's sync to start", () => sync.running() === 1)
    sync.fail(Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" }))
    const exit = await write.promise
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(Exit.isFailure(exit) ? exit.cause : "")).toMatch(/SqlError/)
    // The disk may have dropped what failed: nothing is acknowledged any more, reads included.
    sync.hold(false)
    const calls = sync.calls()
    const later = await Effect.runPromiseExit(sql.withTransaction(sql`INSERT INTO t VALUES (2)`))
    const read = await Effect.runPromiseExit(sql<{ n: number }>`SELECT n FROM t`)
    expect([Exit.isFailure(later), Exit.isFailure(read)]).toEqual([true, true])
    expect(sync.calls()).toBe(calls)
  })
})

describe("the log's sync", () => {
  it("syncs the log's current file: a log replaced under the same path is reopened", async () => {
    const file = tempDb()
    const wal = `${file}-wal`
    const sync = makeWalSync(file)
    cleanups.push(() => sync.close())
    const openLogs = () =>
      readdirSync("/proc/self/fd").flatMap((fd) => {
        try {
          const target = readlinkSync(`/proc/self/fd/${fd}`)
          return target.startsWith(wal) ? [target] : []
        } catch {
          return []
        }
      })
    // No log yet: nothing to sync, nothing kept open.
    sync.committed()
    await sync.durable()
    expect(openLogs()).toEqual([])
    writeFileSync(wal, "first")
    sync.committed()
    await sync.durable()
    expect(openLogs()).toEqual([wal])
    unlinkSync(wal)
    writeFileSync(wal, "second")
    sync.committed()
    await sync.durable()
    expect(openLogs()).toEqual([wal])
    // Synced: nothing more to wait for.
    expect(sync.durable()).toBeUndefined()
  })
})
