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
      await db.execute("DELETE FROM workspace_migrations WHERE name = 'waiting_since_instants'")
    } finally {
      db.close()
    }
  }
})
