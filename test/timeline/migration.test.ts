/**
 * A SQLite database written by the previous release (./fixtures/release-970bdf8.sql, made by
 * ./fixtures/makeRelease.ts against a build of 970bdf8) opened by the built process: see
 * ./migrationChecks.ts for what must hold.
 */
import { createClient } from "@libsql/client"
import { afterAll, beforeAll, expect } from "vitest"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { migrationChecks, OLD_MIGRATIONS, type OldEvent, oldEventOfRow } from "./migrationChecks.js"
import { type BuiltGateway, startBuiltGateway } from "./support.js"

const DUMP = readFileSync(new URL("./fixtures/release-970bdf8.sql", import.meta.url), "utf8")

const dir = mkdtempSync(join(tmpdir(), "timeline-migration-"))
const dbFile = join(dir, "workspace.db")
let old: Array<OldEvent> = []
let gw: BuiltGateway

beforeAll(async () => {
  const db = createClient({ url: pathToFileURL(dbFile).href })
  try {
    await db.executeMultiple(DUMP)
    const migrations = (await db.execute("SELECT name FROM workspace_migrations ORDER BY migration_id")).rows.map((r) => r.name)
    expect(migrations).toEqual(OLD_MIGRATIONS)
    old = (await db.execute("SELECT * FROM events ORDER BY task_id, seq")).rows.map((r) => oldEventOfRow(r as Record<string, unknown>))
  } finally {
    db.close()
  }
  // No seed file: the database already holds its world.
  gw = await startBuiltGateway({ SVC_ADMIN_PORT: "off" }, undefined, dbFile)
}, 60_000)

afterAll(async () => {
  await gw?.cleanup()
  rmSync(dir, { recursive: true, force: true })
})

migrationChecks("SQLite", () => gw.url, () => old)
