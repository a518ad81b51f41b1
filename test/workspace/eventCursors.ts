/**
 * A cursor past every position the store has given out hides nothing: the store refuses it (a
 * BadRequest naming `after`) instead of answering an empty page after which no event would ever
 * come; any other cursor is read, and events written after it follow it. Shared by the SQLite
 * and the PostgreSQL test: on SQLite positions are plain digits (a `<tx>-<n>` one is past them
 * all, and so is a number past the last), on PostgreSQL `<tx>-<n>` ordered by transaction first
 * (past them all: a transaction not yet begun).
 */
import type * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { expect } from "vitest"
import { BadRequest } from "../../src/api/errors.js"
import type { WorkspaceClientService } from "../../src/upstream/WorkspaceClient.js"
import { ACME } from "../support/world.js"

type Store = Pick<WorkspaceClientService, "listEvents" | "appendEvent">

/** The page kinds the gateway asks for: a page, a stream's page (limit and bytes), a probe. */
const PAGES = [{}, { limit: 1000, maxBytes: 1024 * 1024 }, { limit: 1 }] as const

export const checkCursorsPastTheEnd = (store: Store, sql: SqlClient.SqlClient, dialect: "sqlite" | "pg") =>
  Effect.gen(function*() {
    const [task] = yield* sql<{ readonly id: string }>`SELECT id FROM tasks WHERE tenant_id = ${ACME} ORDER BY id LIMIT 1`
    const taskId = task!.id
    const note = (seq: number) => store.appendEvent(ACME, taskId, { type: "note", source: "worker", seq, payload: { seq } })
    const read = (after: string | undefined) =>
      Effect.forEach(PAGES, (page) => store.listEvents(ACME, taskId, { ...page, after }))
    const refused = (after: string) =>
      Effect.forEach(PAGES, (page) =>
        Effect.map(Effect.flip(store.listEvents(ACME, taskId, { ...page, after })), (error) => {
          expect(error, `after=${after} ${JSON.stringify(page)}`).toBeInstanceOf(BadRequest)
          expect(error.message).toMatch(new RegExp(`^after: "${after}" is past every position this store has given out`))
        }))

    const last = (yield* note(1)).position
    const [top] = yield* sql<{ readonly p: number | string }>`SELECT MAX(position) AS p FROM events`
    const maxPosition = Number(top!.p)
    const [snapshot] = yield* sql.onDialectOrElse({
      pg: () => sql<{ readonly xmax: string }>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`,
      orElse: () => sql<{ readonly xmax: string }>`SELECT '0' AS xmax`
    })
    const unbegun = String(BigInt(snapshot!.xmax) + 1000n)

    const past = dialect === "sqlite"
      ? ["1-0", "1-2", "99-0", "0000000000000000001-0", String(maxPosition + 1), String(maxPosition + 1000), "9007199254740991"]
      : [`${unbegun}-0`, `${unbegun}-${maxPosition}`, "9999999999999999999-0", "9999999999999999999-9007199254740991"]
    for (const after of past) yield* refused(after)

    // Not past the end: read, from where it says. From the start, `0` on either store.
    const whole = (yield* store.listEvents(ACME, taskId)).events
    for (const page of yield* read("0")) expect(page.events.map((e) => e.position)).toEqual(whole.slice(0, page.events.length).map((e) => e.position))
    for (const page of yield* read(last)) expect(page.events).toEqual([])
    if (dialect === "sqlite") {
      // A position of another task's, past this task's last: its events come after it.
      for (const page of yield* read(String(maxPosition))) expect(page.events).toEqual([])
    } else {
      // Before every transaction of the store: the whole timeline (a plain number too, whatever its size).
      for (const after of ["1-0", "1-9007199254740991", "5", "9007199254740991"]) {
        for (const page of yield* read(after)) expect(page.events.length, `after=${after}`).toBeGreaterThan(0)
      }
    }

    // Events written after a cursor the store took follow it.
    const next = yield* note(2)
    for (const after of [last, ...(dialect === "sqlite" ? [String(maxPosition)] : [])]) {
      for (const page of yield* read(after)) expect(page.events.map((e) => e.position), `after=${after}`).toEqual([next.position])
    }
  })
