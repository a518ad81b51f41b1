/**
 * Gateway replicas on one PostgreSQL test database, as the multi-replica tests start them: built
 * processes (dist/main.js, as `npm start` runs it) started all at once, so that on an empty
 * database they race to migrate and seed it (part of what those tests check), each seeded from
 * the example fixture and bound to acme, with the test's `env` on top (pool size, leases, poll
 * intervals, an admin token). Should one fail to start, those that did are stopped before the
 * error is thrown: nothing is left running for the file's afterAll to miss. And the test's own
 * client of the database, ended with the replicas.
 */
import { fileURLToPath } from "node:url"
import * as Pg from "pg"
import { type RunningService, startBuilt } from "./process.js"

const EXAMPLE_FIXTURE = fileURLToPath(new URL("../fixtures/example.json", import.meta.url))

export const startReplicas = async (db: string, count: number, env: Record<string, string>): Promise<Array<RunningService>> => {
  const started = await Promise.allSettled(Array.from({ length: count }, () =>
    startBuilt({
      SVC_DATABASE_URL: db,
      SVC_SEED_FILE: EXAMPLE_FIXTURE,
      SVC_TENANT_SLUG: "acme",
      ...env
    })
  ))
  const running = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []))
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected")
  if (failed !== undefined) {
    await stopReplicas(running)
    throw failed.reason
  }
  return running
}

/** A client of `db` of the test's own, for what it reads or changes in the database directly. */
export const connectClient = async (db: string): Promise<Pg.Client> => {
  const pg = new Pg.Client({ connectionString: db })
  await pg.connect()
  return pg
}

/**
 * Ends the test's client (when it has one; an end that fails does not keep the replicas up), then
 * stops each replica by its pid (SIGTERM, SIGKILL after 5 s), all at once.
 */
export const stopReplicas = async (replicas: ReadonlyArray<RunningService>, pg?: Pg.Client): Promise<void> => {
  await pg?.end().catch(() => {})
  await Promise.all(replicas.map((r) => r.stop()))
}
