/** The inbox's order by instant (./instantOrder.ts) on SQLite. */
import { createClient } from "@libsql/client"
import { pathToFileURL } from "node:url"
import { instantOrder } from "./instantOrder.js"

instantOrder("SQLite", {
  env: async () => ({}),
  rewind: async (gw, rows) => {
    const db = createClient({ url: pathToFileURL(gw.dbFile).href })
    try {
      for (const [id, at] of rows) await db.execute({ sql: "UPDATE tasks SET waiting_since = ? WHERE id = ?", args: [at, id] })
      // The Migrator runs only ids past the latest applied: the migrations after it run again
      // (written to be safe to).
      await db.execute("DELETE FROM workspace_migrations WHERE migration_id >= 13")
    } finally {
      db.close()
    }
  }
})
