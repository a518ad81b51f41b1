/**
 * The inbox orders by instant, whatever the spelling of a seeded time: `2026-01-01T00:00:00Z` (no
 * fraction), `…00.500Z` and `…01:00:00.100+01:00` are instants, not text (as text, `.` sorts before
 * `Z` and `+01:00` after every `00:` hour). Pages follow the same order, each task once. A
 * database written before keeps its spellings until the migration that makes them one form: a
 * restart with such rows orders them the same. On the built process, for each store
 * (./instantOrder.test.ts SQLite, ./instantOrder.pg.test.ts PostgreSQL): the same answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startBuiltGateway } from "../timeline/support.js"
import { acmeTask, linksWorld } from "../links/world.js"

/** Seeded createdAt (and so waitingSince) of five waiting tasks, and their order by instant. */
const SEEDED: ReadonlyArray<readonly [number, string]> = [
  [0, "2026-01-01T00:00:01Z"],
  [1, "2026-01-01T00:00:00.500Z"],
  [2, "2026-01-01T00:00:00Z"],
  [3, "2026-01-01T00:00:00.250Z"],
  [4, "2026-01-01T01:00:00.100+01:00"]
]
const BY_INSTANT = [2, 4, 3, 1, 0].map(acmeTask)

const world = () => {
  const w = linksWorld()
  w.tasks = SEEDED.map(([i, at]) => ({ ...w.tasks.find((t) => t.id === acmeTask(i))!, createdAt: at }))
  return w
}

export interface Store {
  /** Settings naming the database (SQLite: none, the gateway's temporary file). */
  readonly env: () => Promise<Record<string, string>>
  /** Writes `waiting_since` of task `id` as it is, and forgets that the normalising migration ran. */
  readonly rewind: (gw: BuiltGateway, rows: ReadonlyArray<readonly [id: string, waitingSince: string]>) => Promise<void>
}

interface Item {
  readonly task: { readonly id: string }
  readonly waitingSince: string
}

export const instantOrder = (name: string, store: Store) =>
  describe(`the inbox's order with seeded times in several spellings (${name})`, () => {
    let gw: BuiltGateway
    let env: Record<string, string> = {}
    // Every gateway started (the restart's keeps the first one's database): each cleaned up.
    const started: Array<BuiltGateway> = []
    beforeAll(async () => {
      env = await store.env()
      gw = await startBuiltGateway(env, world())
      started.push(gw)
    }, 60_000)
    afterAll(async () => {
      for (const g of started.reverse()) await g.cleanup()
    })

    /** Every page of the inbox at `limit`, in order. */
    const allPages = async (limit: number) => {
      const ids: Array<string> = []
      const times: Array<string> = []
      let cursor: string | undefined
      for (let page = 0; page < 10; page++) {
        const res = await http("GET", `${gw.url}/v1/inbox?limit=${limit}${cursor !== undefined ? `&cursor=${cursor}` : ""}`)
        expect(res.status, res.text).toBe(200)
        for (const item of res.body.items as Array<Item>) {
          ids.push(item.task.id)
          times.push(item.waitingSince)
        }
        cursor = res.body.nextCursor
        if (cursor === undefined) break
      }
      return { ids, times }
    }

    it("one page and pages of one and two follow the instants, each task once", async () => {
      // Before: text order (…00.250Z, …00.500Z, …00Z, …01Z, …01:00:00.100+01:00).
      expect((await allPages(50)).ids).toEqual(BY_INSTANT)
      expect((await allPages(2)).ids).toEqual(BY_INSTANT)
      expect((await allPages(1)).ids).toEqual(BY_INSTANT)
      // waitingSince in one form: the instant as toISOString writes it.
      expect((await allPages(50)).times).toEqual([
        "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:00.100Z",
        "2026-01-01T00:00:00.250Z",
        "2026-01-01T00:00:00.500Z",
        "2026-01-01T00:00:01.000Z"
      ])
    })

    it("rows a database holds from before, in those spellings, are made one form at the next start", async () => {
      await gw.stop()
      await store.rewind(gw, SEEDED.map(([i, at]) => [acmeTask(i), at] as const))
      // No seed file: the database holds its world.
      gw = await startBuiltGateway(env, undefined, gw.dbFile)
      started.push(gw)
      expect((await allPages(2)).ids).toEqual(BY_INSTANT)
      expect((await allPages(50)).times[0]).toBe("2026-01-01T00:00:00.000Z")
    })
  })
