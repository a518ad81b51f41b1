/**
 * A task id is text the store keeps: a NUL in a path's composite id (`%00`) was stored cut at it
 * (an event posted to `<task>:s:a%00b` was acknowledged and filed under `<task>:s:a`, another
 * child), and the two topologies disagreed (over a workspace service its check refused it, in
 * one process nothing did). Now a path naming such a task answers 400 naming `taskId` (bodies
 * refused a NUL already).
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"

describe("a NUL in a task id", () => {
  it.effect("in a path (an event, a decision, a file list, a read): 400 naming taskId, nothing stored", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const id = `${EXPENSE_TASK}:s:a%00b`
        const cases = [
          yield* raw("POST", `/v1/tasks/${id}/events`, { type: "nul", source: "nulsrc", seq: 1, payload: {} }),
          yield* raw("POST", `/v1/tasks/${id}/action`, { type: "rejected" }),
          yield* raw("GET", `/v1/tasks/${id}/ui`),
          yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}:%00:x/files`)
        ]
        for (const res of cases) {
          expectError(res, 400, "Bad Request")
          expect(res.body.message).toBe("taskId: contains a NUL character (U+0000), which cannot be stored")
        }
        const events = yield* raw("GET", `/v1/tasks/${EXPENSE_TASK}:s:a/events`)
        expect(events.body.events.filter((e: { source: string }) => e.source === "nulsrc")).toEqual([])
      })
    ))
})
