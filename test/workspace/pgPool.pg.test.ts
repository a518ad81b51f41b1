/**
 * The PostgreSQL pool (src/workspace/embedded/pg.ts, @effect/sql-pg's own protocol client): a
 * connection that dies, at any moment, never becomes an uncaught exception nor a defect. CI once
 * saw `terminating connection due to administrator command` thrown from a pg client that had no
 * "error" listener at that moment. The store no longer holds node-postgres clients (there is no
 * event emitter to guard): the property is checked where it now lives, on the SqlClient the store
 * uses: a query on a killed connection fails as a SqlError, and the pool serves the next query.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import * as Pg from "pg"
import { pgLayer } from "../../src/workspace/embedded/pg.js"
import { testDatabase } from "../support/postgres.js"

const runtimes: Array<{ readonly dispose: () => Promise<void> }> = []
const thrown: Array<unknown> = []
const onThrown = (e: unknown) => thrown.push(e)

beforeEach(() => {
  thrown.length = 0
  process.on("uncaughtException", onThrown)
  process.on("unhandledRejection", onThrown)
})
afterEach(async () => {
  process.off("uncaughtException", onThrown)
  process.off("unhandledRejection", onThrown)
  await Promise.all(runtimes.splice(0).map((r) => r.dispose().catch(() => {})))
})

const storeOn = async () => {
  const url = await testDatabase("pool", { empty: true })
  const runtime = ManagedRuntime.make(pgLayer(url, { poolSize: 2 }))
  runtimes.push(runtime)
  await runtime.runPromise(Effect.service(SqlClient.SqlClient))
  return { url, runtime }
}

/** Ends every other session of the database from the server side (what an administrator's restart does). */
const terminateOthers = async (url: string) => {
  const admin = new Pg.Client({ connectionString: url })
  await admin.connect()
  try {
    await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
  } finally {
    await admin.end()
  }
  await new Promise((r) => setTimeout(r, 200))
}

const selectOne = Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql<{ one: number }>`SELECT 1 AS one`)

describe("PostgreSQL pool", () => {
  it("a connection terminated by the server mid-query: the query fails as a SqlError (not a defect), nothing is thrown, the pool recovers", async () => {
    const { runtime, url } = await storeOn()
    const exit = await runtime.runPromise(
      Effect.gen(function*() {
        const sql = yield* Effect.service(SqlClient.SqlClient)
        const running = yield* Effect.forkChild(Effect.exit(sql`SELECT pg_sleep(10)`))
        yield* Effect.sleep("100 millis")
        yield* Effect.promise(() => terminateOthers(url))
        return yield* Fiber.join(running)
      })
    )
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(Cause.hasDies(exit.cause), Cause.pretty(exit.cause)).toBe(false)
      expect(exit.cause.reasons.filter(Cause.isFailReason).map((r) => SqlError.isSqlError(r.error))).toEqual([true])
    }
    expect((await runtime.runPromise(selectOne))[0]?.one).toBe(1)
    expect(thrown).toEqual([])
  })

  it("a connection terminated inside a transaction: the transaction fails, nothing is thrown outside it, the pool recovers", async () => {
    const { runtime, url } = await storeOn()
    // effect/sql makes a failed ROLLBACK a defect (the connection's state is unknown), as it did on
    // Effect 3: the transaction's failure is asserted, not its kind.
    const exit = await runtime.runPromise(
      Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
        sql.withTransaction(
          Effect.gen(function*() {
            yield* sql`SELECT 1`
            yield* Effect.promise(() => terminateOthers(url))
            return yield* sql`SELECT 1`
          })
        )).pipe(Effect.exit)
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect((await runtime.runPromise(selectOne))[0]?.one).toBe(1)
    expect(thrown).toEqual([])
  })

  it("idle connections terminated by the server: the next query is answered, nothing is thrown", async () => {
    const { runtime, url } = await storeOn()
    // Two connections opened and back in the pool, idle.
    await runtime.runPromise(Effect.all([selectOne, selectOne], { concurrency: 2 }))
    await terminateOthers(url)
    expect((await runtime.runPromise(selectOne))[0]?.one).toBe(1)
    expect((await runtime.runPromise(Effect.all([selectOne, selectOne], { concurrency: 2 }))).map((rows) => rows[0]?.one)).toEqual([1, 1])
    expect(thrown).toEqual([])
  })
})
