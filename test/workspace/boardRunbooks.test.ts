/**
 * The embedded store's task board decodes each workflow's runbook once per text
 * (src/workspace/embedded/runbookCache.ts): a second board reuses the decode, and a runbook
 * changed in the database (here by SQL, as another process or a migration would) is what the
 * next board answers from.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { makeRunbookCache } from "../../src/workspace/embedded/runbookCache.js"
import { exampleFixture } from "../support/gateway.js"
import { embeddedStore } from "../support/storeWorkspace.js"
import { ACME, ACME_US } from "../support/world.js"

const RUNBOOK = JSON.stringify({
  steps: [{ id: "s1", title: "Upload", displayHint: { component: "FILE_UPLOAD", config: {} }, args: {} }]
})

describe("runbook cache", () => {
  it("decodes a workflow's text once, again when the text changes, and refuses what does not decode", () => {
    const cache = makeRunbookCache()
    const first = cache.decode("wf", RUNBOOK)
    expect(first?.steps[0]?.displayHint.component).toBe("FILE_UPLOAD")
    expect(cache.decode("wf", RUNBOOK)).toBe(first)
    const changed = cache.decode("wf", RUNBOOK.replace("FILE_UPLOAD", "APPROVAL"))
    expect(changed?.steps[0]?.displayHint.component).toBe("APPROVAL")
    expect(cache.decode("wf", RUNBOOK)).not.toBe(first)
    expect(cache.decode("wf", null)).toBeNull()
    expect(() => cache.decode("wf", "{\"steps\": 1}")).toThrow()
    // Another workflow with the same text is its own entry.
    expect(cache.decode("other", RUNBOOK)?.steps[0]?.displayHint.component).toBe("FILE_UPLOAD")
  })

  it("keeps at most its size, the least recently used going first", () => {
    const cache = makeRunbookCache(2)
    const a = cache.decode("a", RUNBOOK)
    cache.decode("b", RUNBOOK)
    expect(cache.decode("a", RUNBOOK)).toBe(a)
    cache.decode("c", RUNBOOK) // drops b, the least recently used
    expect(cache.decode("a", RUNBOOK)).toBe(a)
    const b = cache.decode("b", RUNBOOK) // drops c
    cache.decode("c", RUNBOOK) // drops a
    expect(cache.decode("b", RUNBOOK)).toBe(b)
    expect(cache.decode("a", RUNBOOK)).not.toBe(a)
  })

  it("a board after a workflow's runbook changed in the database answers from the new runbook", async () => {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* embeddedStore(exampleFixture)
      const before = yield* store.listTaskBoard!(ACME, ACME_US)
      const waiting = before.find((t) => t.awaiting !== undefined && t.currentStep !== null)
      expect(waiting).toBeDefined()
      const [workflow] = yield* store.sql<{ readonly runbook: string }>`SELECT runbook FROM workflows WHERE id = ${waiting!.workflowId}`
      const runbook = JSON.parse(workflow!.runbook) as { steps: Array<{ id: string; displayHint: { component: string } }> }
      const step = runbook.steps.find((s) => s.id === waiting!.currentStep)!
      expect(step.displayHint.component).toBe(waiting!.awaiting)
      // The same board again: the same answer (from the decoded runbook it kept).
      expect(yield* store.listTaskBoard!(ACME, ACME_US)).toEqual(before)
      step.displayHint.component = "CHANGED_COMPONENT"
      yield* store.sql`UPDATE workflows SET runbook = ${JSON.stringify(runbook)} WHERE id = ${waiting!.workflowId}`
      const after = yield* store.listTaskBoard!(ACME, ACME_US)
      expect(after.find((t) => t.id === waiting!.id)?.awaiting).toBe("CHANGED_COMPONENT")
      // A runbook that no longer decodes: its tasks have no awaiting; the board still answers.
      yield* store.sql`UPDATE workflows SET runbook = ${"{\"steps\": 1}"} WHERE id = ${waiting!.workflowId}`
      const broken = yield* store.listTaskBoard!(ACME, ACME_US)
      expect(broken.find((t) => t.id === waiting!.id)?.awaiting).toBeUndefined()
      expect(broken.map((t) => t.id)).toEqual(before.map((t) => t.id))
    })))
  })
})
