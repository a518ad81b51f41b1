/**
 * The PostgreSQL pool (src/workspace/embedded/pg.ts): a connection that dies, at any moment,
 * never becomes an uncaught exception. CI once saw `terminating connection due to administrator
 * command` thrown from a pg client that had no "error" listener at that moment.
 */
import { afterEach, describe, expect, it } from "vitest"
import * as Pg from "pg"
import { guardedPool } from "../../src/workspace/embedded/pg.js"
import { testDatabase } from "../support/postgres.js"

const pools: Array<Pg.Pool> = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end().catch(() => {})))
})

const poolOn = async (guarded: boolean) => {
  const url = await testDatabase("pool", { empty: true })
  const pool = guarded ? guardedPool({ connectionString: url, max: 2 }) : new Pg.Pool({ connectionString: url, max: 2 })
  pool.on("error", () => {})
  pools.push(pool)
  return pool
}

describe("PostgreSQL pool", () => {
  it("a checked-out connection's error with nobody else listening is not thrown", async () => {
    const pool = await poolOn(true)
    const client = await pool.connect()
    // Between the pool's listener (idle) and a query's: only the guard listens.
    expect(() => client.emit("error", new Error("terminating connection due to administrator command"))).not.toThrow()
    client.release(true)
  })

  it("without the guard the same event is thrown (what the guard is for)", async () => {
    const pool = await poolOn(false)
    const client = await pool.connect()
    expect(() => client.emit("error", new Error("terminating connection due to administrator command"))).toThrow(/administrator/)
    client.release(true)
  })

  it("connections terminated by the server while checked out and while idle: the pool recovers, nothing is thrown", async () => {
    const pool = await poolOn(true)
    const uncaught: Array<unknown> = []
    const onUncaught = (e: unknown) => uncaught.push(e)
    process.on("uncaughtException", onUncaught)
    try {
      const held = await pool.connect()
      const idle = await pool.connect()
      idle.release()
      const admin = new Pg.Client({ connectionString: (pool as unknown as { options: { connectionString: string } }).options.connectionString })
      await admin.connect()
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
      await admin.end()
      await new Promise((r) => setTimeout(r, 200))
      await expect(held.query("SELECT 1")).rejects.toThrow()
      held.release(true)
      expect((await pool.query("SELECT 1 AS one")).rows[0].one).toBe(1)
      expect(uncaught).toEqual([])
    } finally {
      process.off("uncaughtException", onUncaught)
    }
  })
})
