/** The inbox's order by instant (./instantOrder.ts) on PostgreSQL. */
import * as Pg from "pg"
import { testDatabase } from "../support/postgres.js"
import { instantOrder } from "./instantOrder.js"

let url = ""

instantOrder("PostgreSQL", {
  env: async () => {
    url = await testDatabase("inbox_instants")
    return { SVC_DATABASE_URL: url, SVC_ADMIN_PORT: "off" }
  },
  rewind: async (_gw, rows) => {
    const db = new Pg.Client({ connectionString: url })
    await db.connect()
    try {
      for (const [id, at] of rows) await db.query("UPDATE tasks SET waiting_since = $1 WHERE id = $2", [at, id])
      // The Migrator runs only ids past the latest applied: the migrations after it run again
      // (written to be safe to).
      await db.query("DELETE FROM workspace_migrations WHERE migration_id >= 13")
    } finally {
      await db.end()
    }
  }
})
