/**
 * What the timeline tests share: the built gateway (dist/main.js, as `npm start` runs it) on a
 * temporary SQLite database, and a reader that pages a task's timeline back the way every
 * client must (following nextAfter until an answer no longer says hasMore).
 */
import { expect } from "vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import * as Pg from "pg"
import { http, type RunningService, startBuilt } from "../support/process.js"

export interface TimelineEvent {
  readonly taskId: string
  readonly type: string
  readonly source: string
  readonly sourceLabel?: string
  readonly seq: number
  readonly payload: Record<string, unknown>
  readonly groupKey?: string
  readonly createdAt: string
  readonly position: string
  readonly origin: "gateway" | "agent" | "producer"
}

export interface BuiltGateway extends RunningService {
  readonly dir: string
  /** The SQLite file the process writes. */
  readonly dbFile: string
  readonly cleanup: () => Promise<void>
}

/** test/fixtures/example.json as an object, to seed a built gateway with. */
export const EXAMPLE_FIXTURE = JSON.parse(readFileSync(new URL("../fixtures/example.json", import.meta.url), "utf8")) as unknown

/** The built gateway on a fresh temporary database, seeded from `fixture` (an object) when given. */
export const startBuiltGateway = async (env: Record<string, string> = {}, fixture?: unknown, dbFile?: string): Promise<BuiltGateway> => {
  const dir = mkdtempSync(join(tmpdir(), "timeline-"))
  const file = dbFile ?? join(dir, "workspace.db")
  const seed: Record<string, string> = {}
  if (fixture !== undefined) {
    const path = join(dir, "fixture.json")
    writeFileSync(path, JSON.stringify(fixture))
    seed.SVC_SEED_FILE = path
  }
  let service: RunningService
  try {
    service = await startBuilt({
      SVC_TENANT_SLUG: "acme",
      SVC_DATABASE_URL: pathToFileURL(file).href,
      ...seed,
      ...env
    })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    ...service,
    dir,
    dbFile: file,
    cleanup: async () => {
      await service.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

export interface RemoteGateways {
  /** The gateway whose admin listener is the workspace service. */
  readonly store: BuiltGateway
  /** The gateway in front of it (SVC_WORKSPACE_URL), bound to acme, no admin listener. */
  readonly remote: RunningService
  readonly stop: () => Promise<void>
}

/** Two built gateways: `store` on its own database (seeded from `fixture`) with `storeEnv`, and `remote` on its workspace service with `env`. */
export const startRemoteGateways = async (
  adminToken: string,
  fixture: unknown,
  env: Record<string, string> = {},
  storeEnv: Record<string, string> = {}
): Promise<RemoteGateways> => {
  const store = await startBuiltGateway({ ...storeEnv, SVC_ADMIN_TOKEN: adminToken }, fixture)
  let remote: RunningService
  try {
    remote = await startBuilt({
      SVC_WORKSPACE_URL: store.adminUrl,
      SVC_WORKSPACE_TOKEN: adminToken,
      SVC_TENANT_SLUG: "acme",
      SVC_ADMIN_PORT: "off",
      ...env
    })
  } catch (error) {
    await store.cleanup()
    throw error
  }
  return {
    store,
    remote,
    stop: async () => {
      await remote.stop()
      await store.cleanup()
    }
  }
}

export interface PagedTimeline {
  readonly events: ReadonlyArray<TimelineEvent>
  readonly pages: number
}

/**
 * Every event of the task, page by page from `after`: each answer either ends the timeline (no
 * hasMore, no nextAfter) or says where to read on (both, nextAfter = its last event's position).
 */
export const readTimeline = async (baseUrl: string, taskId: string, limit?: number, after?: string): Promise<PagedTimeline> => {
  const events: Array<TimelineEvent> = []
  let cursor = after
  let pages = 0
  for (;;) {
    const query = new URLSearchParams({
      ...(cursor !== undefined ? { after: cursor } : {}),
      ...(limit !== undefined ? { limit: String(limit) } : {})
    })
    const res = await http("GET", `${baseUrl}/v1/tasks/${taskId}/events?${query}`)
    expect(res.status, res.text).toBe(200)
    pages++
    const page = res.body as { events: Array<TimelineEvent>; hasMore?: true; nextAfter?: string }
    events.push(...page.events)
    if (page.hasMore === undefined) {
      expect(page.nextAfter).toBeUndefined()
      return { events, pages }
    }
    expect(page.hasMore).toBe(true)
    expect(page.events.length).toBeGreaterThan(0)
    expect(page.nextAfter).toBe(page.events[page.events.length - 1]!.position)
    cursor = page.nextAfter
    if (pages > 10_000) throw new Error("the timeline never ended")
  }
}

/** The positions are all different (no event twice). */
export const expectEachOnce = (events: ReadonlyArray<TimelineEvent>) => {
  const positions = events.map((e) => e.position)
  const repeated = positions.filter((p, i) => positions.indexOf(p) !== i)
  expect(repeated, "positions read more than once").toEqual([])
}

export const byPosition = (events: ReadonlyArray<TimelineEvent>) => new Map(events.map((e) => [e.position, e]))

/**
 * PostgreSQL: uses up transaction ids (each a committed transaction of its own) until the next
 * one is `margin` short of a power of ten, so that the test's writes cross it (999 -> 1000):
 * positions are `<transaction id>-<n>`, and an order by their text instead of their numbers
 * shows only across such a boundary.
 */
export const nearPowerOfTen = async (databaseUrl: string, margin: number): Promise<number> => {
  const pg = new Pg.Client({ connectionString: databaseUrl })
  await pg.connect()
  try {
    const now = Number((await pg.query<{ x: string }>("SELECT pg_current_xact_id()::text AS x")).rows[0]!.x)
    const boundary = 10 ** String(now + margin).length
    const burn = boundary - margin - now - 1
    if (burn > 0) await pg.query(`DO $$ BEGIN FOR i IN 1..${burn} LOOP PERFORM pg_current_xact_id(); COMMIT; END LOOP; END $$`)
    return boundary
  } finally {
    await pg.end()
  }
}
