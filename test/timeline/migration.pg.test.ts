/**
 * A PostgreSQL database written by the previous release (./fixtures/release-970bdf8.pg.sql,
 * pg_dump of a database made by ./fixtures/makeRelease.ts against a build of 970bdf8) opened by
 * the built process: see ./migrationChecks.ts for what must hold.
 */
import { afterAll, beforeAll, expect } from "vitest"
import { readFileSync } from "node:fs"
import * as Pg from "pg"
import { testDatabase } from "../support/postgres.js"
import { type RunningService, startBuilt } from "../support/process.js"
import { migrationChecks, OLD_MIGRATIONS, type OldEvent, oldEventOfRow } from "./migrationChecks.js"

const DUMP = readFileSync(new URL("./fixtures/release-970bdf8.pg.sql", import.meta.url), "utf8")

let old: Array<OldEvent> = []
let gw: RunningService | undefined

beforeAll(async () => {
  const url = await testDatabase("timeline_migration", { empty: true })
  const pg = new Pg.Client({ connectionString: url })
  await pg.connect()
  try {
    await pg.query(DUMP)
    const migrations = (await pg.query<{ name: string }>("SELECT name FROM public.workspace_migrations ORDER BY migration_id")).rows
    expect(migrations.map((r) => r.name)).toEqual(OLD_MIGRATIONS)
    old = (await pg.query("SELECT * FROM public.events ORDER BY task_id, seq")).rows.map(oldEventOfRow)
  } finally {
    await pg.end()
  }
  // No seed file: the database already holds its world.
  gw = await startBuilt({ SVC_DATABASE_URL: url, SVC_TENANT_SLUG: "acme", SVC_ADMIN_PORT: "off" })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
})

migrationChecks("PostgreSQL", () => gw!.url, () => old)
