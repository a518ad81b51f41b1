import { testDatabase } from "../support/postgres.js"
import { runLifecycleSuite } from "./lifecycle.js"

runLifecycleSuite("PostgreSQL", () => testDatabase("e2e"))
