/**
 * Start failures on PostgreSQL exit (./startFailureCases.ts), and a database that requires what
 * the server cannot give (TLS) is one of them.
 */
import * as Pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.js"
import { freePort } from "../support/process.js"
import { killAllBuilt, runUntilExit } from "./builtRun.js"
import { expectOneLineFailure, startFailureCases } from "./startFailureCases.js"

afterAll(killAllBuilt)

describe("start failures on PostgreSQL", { timeout: 60_000 }, () => {
  startFailureCases(
    () => testDatabase("startfail"),
    // Nothing listens there.
    {
      url: async () => `postgres://postgres@127.0.0.1:${await freePort()}/gateway`,
      line: /^Cannot start: Cannot open the workspace database postgres:\/\/postgres@127\.0\.0\.1:\d+\/gateway: connect ECONNREFUSED/
    }
  )

  it("sslmode=require against a server without TLS: exit 1, the line says so and hides the password", async () => {
    const url = new URL(await testDatabase("startfail_tls"))
    url.password = "not-a-real-secret"
    url.searchParams.set("sslmode", "require")
    const result = await runUntilExit({
      SVC_DATABASE_URL: url.toString(),
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      SVC_ADMIN_PORT: "0"
    })
    expectOneLineFailure(result, /^Cannot start: Cannot open the workspace database postgres:\/\/postgres:\*\*\*@.*sslmode=require.*SSL/i)
    expect(result.output).not.toContain("not-a-real-secret")
  })

  it("a role that may not create the tables: exit 1, the line says what PostgreSQL refused", async () => {
    // The database belongs to the server's superuser; the role only logs in (README: it must own it).
    const url = new URL(await testDatabase("startfail_role", { empty: true }))
    const role = `weak_${Math.random().toString(36).slice(2, 10)}`
    const admin = new Pg.Client({ connectionString: url.toString() })
    await admin.connect()
    try {
      await admin.query(`CREATE ROLE ${role} LOGIN`)
    } finally {
      await admin.end()
    }
    url.username = role
    const result = await runUntilExit({
      SVC_DATABASE_URL: url.toString(),
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      SVC_ADMIN_PORT: "0"
    })
    expectOneLineFailure(result, /^Cannot start: Workspace database migration failed: permission denied for schema public/)
  })
})
