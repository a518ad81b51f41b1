/**
 * The SQLite driver workaround under vitest (src/lib/effectUnstableAlias.ts): @effect/sql-libsql
 * 4.0.0-beta.98 imports effect/unstable/*; vitest leaves the driver to Node (vitest.config.ts
 * keeps it external), where the resolve hook maps those imports. Without the hook this fails
 * with ERR_MODULE_NOT_FOUND for effect/dist/unstable/....
 */
import "../../src/lib/effectUnstableAlias.js"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "vitest"

it("loads the SQLite driver under vitest and queries through effect/sql's SqlClient", async () => {
  const LibsqlClient = await import("@effect/sql-libsql/LibsqlClient")
  const url = `file:${join(mkdtempSync(join(tmpdir(), "alias-")), "x.db")}`
  const rows = await Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ one: number }>`SELECT 1 AS one`).pipe(
      Effect.provide(LibsqlClient.layer({ url }))
    )
  )
  expect(rows).toEqual([{ one: 1 }])
})
