/**
 * A ledger's text cells are bounded in characters (code points), as README's input rules count
 * them: an emoji is one character, not its two UTF-16 units.
 */
import { describe, expect, it } from "vitest"
import { decideEdit } from "../../src/domain/ledgers.js"

describe("a ledger's text cells", () => {
  it("take their bound in emoji and refuse one more", () => {
    for (const [ledger, field, max] of [["expenses", "merchant", 256], ["expenses", "category", 128], ["journal_proposals", "memo", 2000]] as const) {
      // Before: 129 emoji in a 256-character merchant were refused.
      expect(decideEdit(ledger, "NEEDS_ATTENTION", field, "😀".repeat(max)), `${field} ${max}`).toEqual({ _tag: "ok", value: "😀".repeat(max) })
      expect(decideEdit(ledger, "NEEDS_ATTENTION", field, "😀".repeat(max + 1))).toEqual({
        _tag: "badRequest",
        message: `value for ${field}: must be a non-empty string of at most ${max} characters`
      })
    }
  })
})
