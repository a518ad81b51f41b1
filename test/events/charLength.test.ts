/**
 * An event's text fields are bounded in characters (code points), as the spec's "up to 128
 * characters" and the published document's `maxLength` (JSON Schema counts code points) say:
 * 128 emoji (256 UTF-16 units) fit a `type`; 129 do not, and the 400 names the field.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { charCount, utf8Length } from "../../src/api/textLength.js"
import { expectError, raw, withGateway } from "../support/gateway.js"
import { EXPENSE_TASK } from "../support/world.js"

const post = (fields: Record<string, unknown>) =>
  raw("POST", `/v1/tasks/${EXPENSE_TASK}/events`, { type: "note", source: "worker", payload: {}, ...fields })

describe("event text bounded in characters", () => {
  it.effect("type, source, groupKey and sourceLabel: at the bound in emoji and CJK accepted, one past refused naming the field", () =>
    withGateway(() =>
      Effect.gen(function*() {
        const cases = [["type", 128], ["source", 64], ["groupKey", 128], ["sourceLabel", 256]] as const
        let seq = 0
        for (const [field, max] of cases) {
          for (const unit of ["😀", "𠀀", "界"]) {
            const ok = yield* post({ [field]: unit.repeat(max), seq: seq++ })
            expect(ok.status, `${field} ${max} x ${unit}: ${JSON.stringify(ok.body)}`).toBe(200)
            const over = yield* post({ [field]: unit.repeat(max + 1), seq: seq++ })
            expectError(over, 400, "Bad Request", field)
            expect(over.body.message).toContain(`at most ${max} character(s)`)
          }
        }
      })
    ))

  it.effect("a decision's step and comments, and the inbox's workflowId, count characters too", () =>
    withGateway(() =>
      Effect.gen(function*() {
        // 256 emoji name no step of the task: the step's 409, not a 400 for its length.
        const far = yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", step: "😀".repeat(256) })
        expect(far.status, JSON.stringify(far.body)).toBe(409)
        expectError(yield* raw("POST", `/v1/tasks/${EXPENSE_TASK}/action`, { type: "approved", step: "😀".repeat(257) }), 400, "Bad Request", "step")
        const inbox = yield* raw("GET", `/v1/inbox?workflowId=${encodeURIComponent("😀".repeat(256))}`)
        expect(inbox.status, JSON.stringify(inbox.body)).toBe(200)
        expectError(yield* raw("GET", `/v1/inbox?workflowId=${encodeURIComponent("😀".repeat(257))}`), 400, "Bad Request", "workflowId")
      })
    ))

  it("charCount: surrogate pairs count once, lone surrogates once each", () => {
    expect(charCount("😀".repeat(3))).toBe(3)
    expect(charCount("a\uD800b\uDC00")).toBe(4)
    expect(charCount("\uD83D\uDE00\uD83D")).toBe(2)
    expect(charCount("")).toBe(0)
  })
})

describe("utf8Length (a task id's bound in bytes)", () => {
  it("is what TextEncoder writes, for any text, lone surrogates included", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 64 }), fc.string({ unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)), maxLength: 4 }), (text, surrogates) => {
        for (const s of [text, surrogates, text + surrogates + text]) {
          expect(utf8Length(s), JSON.stringify(s)).toBe(new TextEncoder().encode(s).length)
        }
      }),
      { numRuns: 500 }
    )
  })
})
