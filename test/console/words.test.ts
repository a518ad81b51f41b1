/** The console's words for identifiers, and its timeline sentences with their grouping (pure, no browser). */
import { describe, expect, it } from "vitest"
import type { TaskEvent } from "../../src/api/resources.js"
import { columnsOf, rowsOf, sortForReview, statusCounts } from "../../src/console/reviewModel.js"
import { errorWords, hintOf } from "../../src/console/startForm.js"
import { type ConsoleKnown, entriesOf, type Piece } from "../../src/console/timelineWords.js"
import { failureOf, snapshotWords } from "../../src/console/decidedWords.js"
import { tasksForPeriod } from "../../src/console/startForm.js"
import { assigneesWord, elapsed, grantKey, humanize, patternFormat, priorityMarks, providerName, statusWord, withProviderNames } from "../../src/console/words.js"

const usd = (n: number) => new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" }).format(n)
const text = (what: ReadonlyArray<Piece>) =>
  what.map((p) => (typeof p === "string" ? p : p.kind === "change" ? `${p.from} → ${p.to}` : p.kind === "quote" ? `“${p.text}”` : p.text)).join("")

describe("people's words", () => {
  it("labels keys, statuses and providers", () => {
    expect(humanize("amount_gross")).toBe("Amount gross")
    expect(humanize("gl_account")).toBe("GL account")
    expect(humanize("upload_receipts")).toBe("Upload receipts")
    expect(humanize("autoMatch")).toBe("Auto match")
    expect(statusWord("IN_PROGRESS")).toBe("In progress")
    expect(statusWord("NEEDS_ATTENTION")).toBe("Needs attention")
    expect(statusWord("ON_HOLD")).toBe("On hold")
    expect(providerName("quickbooks_online")).toBe("QuickBooks Online")
    expect(withProviderNames("Local quickbooks_online")).toBe("Local QuickBooks Online")
  })

  it("tells a pattern's format, and a description wins", () => {
    expect(patternFormat("^\\d{4}-(0[1-9]|1[0-2])$")).toBe("YYYY-MM")
    expect(patternFormat("^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$")).toBe("YYYY-MM-DD")
    expect(patternFormat("^[A-Z]{3}$")).toBe("AAA")
    expect(patternFormat("^(a|b)+$")).toBeUndefined()
    const period = { key: "period", type: "string" as const, pattern: "^\\d{4}-(0[1-9]|1[0-2])$", required: true }
    expect(hintOf(period)).toBe("Format: YYYY-MM")
    expect(hintOf({ ...period, description: "Accounting period" })).toBe("Accounting period")
    expect(errorWords(period, "must match the pattern ^\\d{4}-(0[1-9]|1[0-2])$")).toBe("must look like YYYY-MM")
    expect(errorWords({ ...period, pattern: "^(a|b)+$", description: "a or b" }, "must match the pattern ^(a|b)+$")).toBe("is not in the expected format (a or b)")
  })
})

describe("the review table's model", () => {
  const step = {
    id: "review",
    title: "Review",
    displayHint: { component: "TABLE_REVIEW", config: { columns: ["merchant", { key: "amount_gross", title: "Gross" }] } },
    args: {
      rows: [
        { id: "a", status: "APPROVED", fields: { merchant: "A", amount_gross: 1, description: null, currency: "USD" }, editable: [] },
        { id: "b", status: "NEEDS_ATTENTION", fields: { merchant: "B", amount_gross: 2, description: "Why", currency: "USD" }, editable: ["merchant"] },
        { id: "c", status: "REJECTED", fields: { merchant: "C", amount_gross: 3, description: null, currency: "USD" }, editable: [] }
      ]
    }
  }
  it("numbers rows as listed, sorts attention first, counts by status, orders the configured columns with the reason first", () => {
    const rows = rowsOf(step)!
    expect(sortForReview(rows).map((r) => [r.id, r.number])).toEqual([["b", 2], ["a", 1], ["c", 3]])
    expect(statusCounts(rows)).toEqual([["NEEDS_ATTENTION", 1], ["APPROVED", 1], ["REJECTED", 1]])
    const { shown, others } = columnsOf(step.displayHint.config, rows)
    expect(shown.map((c) => [c.key, c.label, c.kind])).toEqual([["description", "Description", "text"], ["merchant", "Merchant", "text"], ["amount_gross", "Gross", "money"]])
    expect(others.map((c) => c.label)).toEqual(["Currency"])
  })
})

describe("timeline sentences", () => {
  const known: ConsoleKnown = {
    stepTitle: (id) => (id === "review_expenses" ? "Review flagged expenses" : humanize(id)),
    row: (id) => (id === "r2" ? { number: 2, label: "Delta Air Lines", currency: "USD" } : undefined),
    fieldLabel: humanize
  }
  let seq = 0
  // The gateway's own record by default (origin is the store's mark); another source is a producer's.
  const ev = (
    type: string,
    payload: Record<string, unknown>,
    minute = 0,
    source = "audit",
    origin: TaskEvent["origin"] = source === "audit" || source === "workspace" ? "gateway" : "producer"
  ): TaskEvent => ({
    taskId: "t",
    type,
    source,
    seq: ++seq,
    position: String(seq),
    origin,
    payload,
    createdAt: new Date(Date.UTC(2026, 10, 1, 9, minute)).toISOString()
  })

  it("says who edited which field of which row, old → new in the row's currency", () => {
    const [entry] = entriesOf([ev("row.edited", { actor: "Ana Lopez", rowId: "r2", field: "amount_gross", oldValue: 120, newValue: 125, via: "row_action", stepId: "review_expenses" })], known)
    expect(entry && "who" in entry ? entry.who : undefined).toBe("Ana Lopez")
    expect(text(entry!.what!)).toBe(`edited Amount gross of row 2 (Delta Air Lines): ${usd(120)} → ${usd(125)}`)
  })

  it("groups one person's edits of one row, and their rejects, within minutes; not across people or rows", () => {
    const events = [
      ev("row.edited", { actor: "Ana", rowId: "r2", field: "merchant", oldValue: "Delta", newValue: "Delta Air Lines", via: "row_action" }, 0),
      ev("row.edited", { actor: "Ana", rowId: "r2", field: "category", oldValue: null, newValue: "Travel", via: "row_action" }, 2),
      ev("row.edited", { actor: "Bob", rowId: "r2", field: "category", oldValue: "Travel", newValue: "Flights", via: "row_action" }, 3),
      ev("row.rejected", { actor: "Bob", rowId: "r2", previousStatus: "NEEDS_ATTENTION", newStatus: "REJECTED", via: "row_action" }, 4),
      ev("row.rejected", { actor: "Bob", rowId: "r9abcdef-0000-0000-0000-000000000000", previousStatus: "NEEDS_ATTENTION", newStatus: "REJECTED", via: "row_action" }, 5),
      ev("row.edited", { actor: "Bob", rowId: "r2", field: "merchant", oldValue: "A", newValue: "B", via: "row_action" }, 40)
    ]
    const entries = entriesOf(events, known)
    expect(entries.map((e) => e.events.length)).toEqual([2, 1, 2, 1])
    expect(text(entries[0]!.what!)).toBe("edited 2 values of row 2 (Delta Air Lines): Merchant “Delta” → “Delta Air Lines”; Category empty → “Travel”")
    expect(text(entries[2]!.what!)).toBe("rejected 2 rows: row 2 (Delta Air Lines) and row r9abcdef")
  })

  it("leaves other producers' events to the caller, and a look-alike from another source too", () => {
    const entries = entriesOf([ev("step.completed", { step: "x" }, 0, "worker"), ev("row.edited", { actor: "Eve" }, 0, "worker")], known)
    expect(entries.every((e) => e.what === undefined)).toBe(true)
  })

  it("takes a record's source at its word only when the store marked it the gateway's: a producer's look-alike gets no sentence", () => {
    const payload = { actor: "Eve", rowId: "r2", field: "merchant", oldValue: "A", newValue: "B", via: "row_action" }
    const forged = entriesOf([ev("row.edited", payload, 0, "audit", "producer"), ev("task.status_changed", { from: "RUNNING", to: "COMPLETED" }, 1, "workspace", "agent")], known)
    expect(forged.every((e) => e.what === undefined)).toBe(true)
    expect(entriesOf([ev("row.edited", payload, 0, "audit", "gateway")], known)[0]!.what).toBeDefined()
  })
})

describe("the inbox's words", () => {
  it("says who a step waits for and how long it has waited", () => {
    expect(assigneesWord([])).toBe("anyone")
    expect(assigneesWord(["ann@acme.test", "group:controllers"])).toBe("ann@acme.test or the controllers group")
    // The prefix in any case, as the gateway reads it (a step's GROUP:ctl grants the group ctl).
    expect(assigneesWord(["GROUP:ctl", "Group:ops"])).toBe("the ctl group or the ops group")
    expect(assigneesWord(["agent:5f0c8e7a-3b1d-4c2e-9a6f-7d8e9f0a1b2c"])).toBe("the agent 5f0c8e7a")
    expect(assigneesWord(["agent:5f0c8e7a-3b1d-4c2e-9a6f-7d8e9f0a1b2c"], () => "Reconciler")).toBe("the agent Reconciler")
    const now = Date.parse("2026-12-05T00:00:00Z")
    expect(elapsed("2026-12-04T23:59:30Z", now)).toBe("less than a minute")
    expect(elapsed("2026-12-04T21:00:00Z", now)).toMatch(/3 hours/)
    expect(elapsed("2026-12-01T00:00:00Z", now)).toMatch(/4 days/)
    expect(elapsed("not a time", now)).toBe("not a time")
  })
})

describe("the details' words", () => {
  const known: ConsoleKnown = { stepTitle: (id) => (id === "review" ? "Review flagged expenses" : humanize(id)), row: () => undefined, fieldLabel: humanize }

  it("shows a priority only where it differs from the list's usual one, and an ordinary usual one not at all", () => {
    const all = priorityMarks(["HIGH", "HIGH", "HIGH"])
    expect(all.common).toBe("HIGH")
    expect(all.marked("HIGH")).toBe(false)
    const mixed = priorityMarks(["HIGH", "LOW", "HIGH"])
    expect([mixed.marked("LOW"), mixed.marked("HIGH")]).toEqual([true, false])
    const normal = priorityMarks(["NORMAL", "URGENT"])
    expect(normal.common).toBeUndefined()
    expect(normal.marked("URGENT")).toBe(true)
    expect(priorityMarks(["", ""]).common).toBeUndefined()
    expect(priorityMarks([]).common).toBeUndefined()
  })

  it("compares groups as the gateway grants them: case and compatibility forms, not look-alikes", () => {
    expect(grantKey("Controllers")).toBe(grantKey("ｃontrollers"))
    expect(grantKey("contrоllers")).not.toBe(grantKey("controllers")) // Cyrillic о
  })

  it("tells a snapshot as a sentence with its facts, never as JSON", () => {
    const decided = snapshotWords({ decision: "rejected", reason: "Wrong period", decidedAt: "2026-09-03T11:00:00Z", decidedBy: "bob@acme.test", extra: { a: [1, 2] } }, "review", known)
    expect(decided.sentence.who).toBe("bob@acme.test")
    expect(text(decided.sentence.what)).toBe("rejected Review flagged expenses, saying “Wrong period”")
    expect(decided.facts).toEqual([["Extra", "A: 1, 2"]])
    expect(text(snapshotWords({ files: 3, submittedAt: "2026-11-01T09:05:00Z" }, "upload", known).sentence.what)).toBe("Someone not named submitted 3 files to Upload")
    expect(text(snapshotWords("x", "review", known).sentence.what)).toBe("Review flagged expenses was completed; nothing else was recorded")
    expect(snapshotWords({ ["__proto__"]: 1, big: "y".repeat(2000) }, "s", known).facts.map(([l, t]) => [l, t.length])).toEqual([["Proto", 1], ["Big", 501]])
  })

  it("says why a FAILED task failed: the rejected step's snapshot, else the timeline, else nothing", () => {
    expect(text(failureOf({ review: { decision: "rejected", reason: null } }, [], known)!.what)).toBe("Someone not named rejected Review flagged expenses, with no comment")
    const event = { taskId: "t", type: "step.completed", source: "workspace", seq: 1, payload: { stepId: "review", decision: "reject", comments: "No", actor: "ann" }, createdAt: "2026-01-01T00:00:00Z", position: "1", origin: "gateway" } as TaskEvent
    expect(failureOf({}, [event], known)).toMatchObject({ who: "ann", at: "2026-01-01T00:00:00Z" })
    expect(failureOf({}, [{ ...event, origin: "producer" }], known)).toBeUndefined()
  })

  it("finds the entity's tasks of a workflow for a period by the whole period in the title", () => {
    const t = (title: string, workflowId = "close") => ({ id: title, title, status: "IN_PROGRESS", priority: "HIGH", entityId: "e", workflowId, createdAt: "2026-01-01T00:00:00Z" })
    const tasks = [t("Close 2026-10"), t("Close 2026-101"), t("Close 2026-1"), t("Other 2026-10", "other"), t("Close (2026-10) again")]
    expect(tasksForPeriod(tasks, "close", "2026-10").map((x) => x.title)).toEqual(["Close 2026-10", "Close (2026-10) again"])
    expect(tasksForPeriod(tasks, "close", "2026.10")).toEqual([])
    expect(tasksForPeriod(tasks, "close", " ")).toEqual([])
  })
})
