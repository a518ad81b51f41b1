/** The start form's model: defaults filled in, values typed, the gateway's own rule checked before sending. */
import { describe, expect, it } from "vitest"
import type { StartParam } from "../../src/api/resources.js"
import { initialDraft, parseDraft } from "../../src/console/startForm.js"

const PARAMS: ReadonlyArray<StartParam> = [
  { key: "period", type: "string", pattern: "^\\d{4}-(0[1-9]|1[0-2])$", required: true },
  { key: "threshold", type: "number", default: 75, required: false },
  { key: "currency", type: "string", enum: ["USD", "EUR", "GBP"], default: "USD", required: false },
  { key: "autoMatch", type: "boolean", default: true, required: false },
  { key: "entities", type: "array", default: [], required: false }
]

describe("start form", () => {
  it("fills in defaults", () => {
    expect(initialDraft(PARAMS)).toEqual({ period: "", threshold: "75", currency: "0", autoMatch: true, entities: "[]" })
  })

  it("sends typed values when every check passes", () => {
    const draft = { ...initialDraft(PARAMS), period: "2026-11", currency: "1", entities: "[\"acme-us\"]" }
    expect(parseDraft(PARAMS, draft)).toEqual({
      context: { period: "2026-11", threshold: 75, currency: "EUR", autoMatch: true, entities: ["acme-us"] },
      errors: {}
    })
  })

  it("refuses a missing required key, a pattern mismatch, a non-number and bad JSON, naming each key", () => {
    expect(parseDraft(PARAMS, initialDraft(PARAMS)).errors).toEqual({ period: "is required" })
    const bad = parseDraft(PARAMS, { ...initialDraft(PARAMS), period: "2026-13", threshold: "lots", entities: "[" })
    expect(Object.keys(bad.errors).sort()).toEqual(["entities", "period", "threshold"])
    expect(bad.errors.period).toContain("pattern")
    expect(bad.context).not.toHaveProperty("period")
  })
})
