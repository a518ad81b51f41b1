/**
 * The attack pass on the console's pure models: hostile or odd data from a step's
 * rows and config, a runbook's odd patterns, odd audit payloads. No browser.
 */
import { describe, expect, it } from "vitest"
import type { TaskEvent } from "../../src/api/resources.js"
import type { UiStep } from "../../src/api/resources.js"
import { cellText, columnsOf, draftOf, rowsOf, typedValue } from "../../src/console/reviewModel.js"
import { entriesOf, NOTHING_KNOWN, type Piece } from "../../src/console/timelineWords.js"
import { patternFormat } from "../../src/console/words.js"

const stepWith = (rows: unknown, config: Record<string, unknown> = {}) =>
  ({ id: "s", title: "S", displayHint: { component: "TABLE_REVIEW", config }, args: { rows } }) as unknown as UiStep

describe("hostile rows", () => {
  it("a column named after Object.prototype's members reads as empty, never as the prototype or a function", () => {
    const rows = rowsOf(stepWith([{ id: "r", status: "PENDING", fields: { merchant: "M" } }]))!
    const { shown } = columnsOf({ columns: ["__proto__", "constructor", "toString", "merchant"] }, rows)
    const texts = shown.map((c) => cellText(rows[0]!.fields[c.key], c.kind, undefined))
    expect(texts).toEqual(["", "", "", "M"])
  })

  it("objects and arrays in fields show as their JSON, not as nothing or run together", () => {
    const rows = rowsOf(stepWith([{ id: "r", status: "PENDING", fields: { meta: { a: 1 }, tags: ["a", "b"] } }]))!
    const { shown } = columnsOf({}, rows)
    expect(shown.map((c) => cellText(rows[0]!.fields[c.key], c.kind, undefined))).toEqual(['{"a":1}', '["a","b"]'])
  })

  it("an amount stored as text in a money column is formatted like the others", () => {
    const rows = rowsOf(stepWith([
      { id: "a", status: "PENDING", fields: { amount_gross: 12.5, currency: "USD" } },
      { id: "b", status: "PENDING", fields: { amount_gross: "1240.00", currency: "USD" } }
    ]))!
    const [column] = columnsOf({ columns: ["amount_gross"] }, rows).shown
    expect(column!.kind).toBe("money")
    expect(cellText(rows[1]!.fields.amount_gross, "money", "USD")).toBe(new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" }).format(1240))
  })
})

describe("numbers typed in the reader's locale", () => {
  it("a decimal comma where the locale writes one, grouping where it groups; an ambiguous text stays text", () => {
    expect(typedValue("1240,50", 1, "de-DE")).toBe(1240.5)
    expect(typedValue("1.240,50", 1, "de-DE")).toBe(1240.5)
    expect(typedValue("1240.5", 1, "de-DE")).toBe(1240.5)
    expect(typedValue("1,240.50", 1, "en-US")).toBe(1240.5)
    expect(typedValue("1240.5", 1, "en-US")).toBe(1240.5)
    // "12,5" in en-US is neither a grouped nor a plain number: sent as typed, the gateway refuses it.
    expect(typedValue("12,5", 1, "en-US")).toBe("12,5")
    expect(typedValue("-3,25", 1, "fr-FR")).toBe(-3.25)
  })
  it("where the locale writes other digits (Arabic, Persian), the editor starts in Latin digits and takes either", () => {
    for (const locale of ["ar-EG", "fa-IR"]) {
      expect(draftOf(1240.5, locale)).toBe("1240.5")
      expect(typedValue(draftOf(1240.5, locale), 1, locale)).toBe(1240.5)
    }
    expect(typedValue("١٢٤٠٫٥", 1, "ar-EG")).toBe(1240.5)
    expect(typedValue("۱۲۴۰٫۵", 1, "fa-IR")).toBe(1240.5)
  })
})

describe("odd start patterns", () => {
  it("a huge repeat count gives no hint instead of throwing (which blanked the start form)", () => {
    expect(() => patternFormat("^\\d{999999999}$")).not.toThrow()
    expect(patternFormat("^\\d{999999999}$")).toBeUndefined()
  })
  it("an ISO date written with \\d reads as YYYY-MM-DD, not 9999-99-99", () => {
    expect(patternFormat("^\\d{4}-\\d{2}-\\d{2}$")).toBe("YYYY-MM-DD")
    expect(patternFormat("^\\d{4}-(0[1-9]|1[0-2])-\\d{2}$")).toBe("YYYY-MM-DD")
  })
})

describe("odd audit payloads", () => {
  const text = (what: ReadonlyArray<Piece>) =>
    what.map((p) => (typeof p === "string" ? p : p.kind === "change" ? `${p.from ?? ""}→${p.to}` : p.text)).join("")
  // The gateway's own record (origin is the store's mark): the only events described in words.
  const ev = (payload: Record<string, unknown>, type = "row.edited", source = "audit"): TaskEvent =>
    ({ taskId: "t", seq: 1, position: "1", origin: "gateway", type, source, payload, createdAt: "2026-11-01T09:00:00Z" }) as unknown as TaskEvent
  it("an edit without its old and new values does not claim they were empty", () => {
    const [entry] = entriesOf([ev({ actor: "a@x", rowId: "r", field: "merchant" })], NOTHING_KNOWN)
    expect(text(entry!.what!)).not.toContain("empty")
    const [only] = entriesOf([ev({ actor: "a@x", rowId: "r", field: "merchant", newValue: "Uber" })], NOTHING_KNOWN)
    expect(text(only!.what!)).not.toContain("empty")
    expect(text(only!.what!)).toContain("“Uber”")
  })
  it("a status change without a status says so rather than end mid-sentence", () => {
    const [entry] = entriesOf([ev({ from: "IN_PROGRESS" }, "task.status_changed", "workspace")], NOTHING_KNOWN)
    expect(text(entry!.what!).trim()).not.toMatch(/now\s*\(|now$/)
  })
})
