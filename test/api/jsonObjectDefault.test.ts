/**
 * A JSON object decoded from nothing gets a fresh `{}` each time: the declared JSON object keeps
 * the value it is given (no copy, unlike a record), so a shared default object would be one
 * instance across every request that omits the key, and a write into one would show in all.
 */
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { RunbookStep } from "../../src/upstream/model.js"

describe("a defaulted JSON object", () => {
  it("is a fresh object per decode (a step's args and display config)", () => {
    const decode = Schema.decodeUnknownSync(Schema.toCodecJson(RunbookStep) as unknown as Schema.Codec<typeof RunbookStep.Type, unknown>)
    const a = decode({ id: "s", title: "S", displayHint: { component: "FORM" } })
    const b = decode({ id: "s", title: "S", displayHint: { component: "FORM" } })
    expect(a.args).toEqual({})
    expect(a.args).not.toBe(b.args)
    expect(a.displayHint.config).not.toBe(b.displayHint.config)
  })
})
