/**
 * The workspace service writes the task board without the HttpApi's Schema encode
 * (src/upstream/taskBoard.ts boardJson): for every board the schema accepts, the bytes are the
 * encode's, whatever order the tasks' keys were written in and whatever else they carry.
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BoardTask, type Workspace } from "../../src/upstream/model.js"
import { boardJson } from "../../src/upstream/taskBoard.js"

const Board = Schema.Array(BoardTask)
/** What the HttpApi answered: the success schema's JSON encode, then JSON.stringify. */
const encoded = (tasks: unknown) => JSON.stringify(Schema.encodeUnknownSync(Schema.toCodecJson(Board))(tasks))

/** effect's generator of valid boards (UUIDs, optional awaiting), seeded and sized by fast-check. */
const boards: fc.Arbitrary<ReadonlyArray<Workspace.BoardTask>> = fc
  .tuple(fc.integer({ min: 0, max: 0x7fffffff }), fc.integer({ min: 0, max: 30 }))
  .map(([seed, size]) => Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(Board), { count: 1, seed, size }))[0]!)

/** The same task with its keys in another order (by `rank`), an extra key, or `awaiting: undefined`. */
const reshaped = (task: Workspace.BoardTask, rank: ReadonlyArray<number>, extra: boolean, undefinedAwaiting: boolean) => {
  const entries = Object.entries(task)
    .map((entry, i) => [rank[i] ?? i, entry] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, entry]) => entry)
  const copy: Record<string, unknown> = Object.fromEntries(entries)
  if (extra) copy.context = { secret: true }
  if (undefinedAwaiting && copy.awaiting === undefined) copy.awaiting = undefined
  return copy as unknown as Workspace.BoardTask
}

describe("the task board's JSON", () => {
  it("is the schema encode's bytes for generated boards", () => {
    fc.assert(fc.property(boards, (tasks) => boardJson(tasks) === encoded(tasks)), { numRuns: 300 })
  })

  it("is the schema encode's bytes whatever the key order and excess keys of the tasks", () => {
    fc.assert(
      fc.property(
        boards,
        fc.array(fc.nat(20), { minLength: 10, maxLength: 10 }),
        fc.boolean(),
        fc.boolean(),
        (tasks, order, extra, undefinedAwaiting) => {
          const shaped = tasks.map((t) => reshaped(t, order, extra, undefinedAwaiting))
          return boardJson(shaped) === encoded(shaped)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("writes an empty board and a task without awaiting as the encode does", () => {
    expect(boardJson([])).toBe(encoded([]))
    const task = {
      id: "694ebd37-72d4-4ae6-b944-eb027435cd70",
      tenantId: "ded92d4b-f408-46e5-8cce-284491efe71d",
      entityId: "3acc7ce9-d0bf-431a-9528-aa340456a628",
      workflowId: "wf\u2028\"x\"",
      title: "T\u00e9st \ud83d\ude00 </script>",
      status: "IN_PROGRESS",
      priority: "high",
      createdAt: "2026-01-01T00:00:00.000Z",
      currentStep: null
    }
    expect(boardJson([task])).toBe(encoded([task]))
    expect(boardJson([{ ...task, awaiting: "FILE_UPLOAD" }])).toBe(encoded([{ ...task, awaiting: "FILE_UPLOAD" }]))
  })
})
