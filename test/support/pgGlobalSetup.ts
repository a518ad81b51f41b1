/**
 * vitest globalSetup: one PostgreSQL server per test run (./postgres.ts), its admin URL given to
 * the test files through `inject("pgAdminUrl")`; each file creates its own database. Stopped
 * after the run, whatever the tests did.
 *
 * A run that names only test files none of which is a PostgreSQL one (`*.pg.test.ts`) starts no
 * server: `npx vitest run test/gateway/x.test.ts` costs nothing extra.
 */
import type { TestProject } from "vitest/node"
import { startPostgres } from "./postgres.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** postgres://... of the run's server ("" when no PostgreSQL test was selected). */
    pgAdminUrl: string
  }
}

const selectsNoPgFile = () => {
  const run = process.argv.indexOf("run")
  const filters = process.argv.slice(run === -1 ? 2 : run + 1).filter((a) => !a.startsWith("-") && /test|\.ts$/.test(a))
  return filters.length > 0 && !filters.some((f) => f.includes(".pg") || f.endsWith("/") || !f.includes("."))
}

export default async function setup(project: TestProject) {
  if (selectsNoPgFile()) {
    project.provide("pgAdminUrl", "")
    return
  }
  const server = await startPostgres()
  project.provide("pgAdminUrl", server.adminUrl)
  return () => server.stop()
}
