import { join } from "node:path"
import { runLifecycleSuite } from "./lifecycle.js"

runLifecycleSuite("SQLite", (dir) => `file:${join(dir, "workspace.db")}`)
