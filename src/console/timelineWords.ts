/**
 * The console's sentences for the gateway's own timeline events (source `audit`: task.created,
 * row.edited, row.rejected, file.stored, data.ingested; source `workspace`: step.completed,
 * source.submitted, task.status_changed; payloads as src/workspace/engine.ts writes them), in
 * the words the screen uses: step titles, field labels, the row number the review table shows,
 * amounts in the row's currency, statuses as words. "bob@acme.example edited Amount gross of
 * row 2 (Delta Air Lines): $1,240.00 → $124.00".
 *
 * Consecutive edits of one row by one person, and consecutive rejects by one person, within a
 * few minutes, read as one entry. Which events are the record, and who acted, come from
 * src/client/eventText.ts (shared with `svc events`).
 */
import type { TaskEvent } from "../api/resources.js"
import { formatBytes, isGatewayRecord, shortId, type TimelineIndex, type Who, whoText } from "../client/eventText.js"
import { currencyCode, formatMoney, humanize, isAmountKey, orList, plural, statusWord } from "./words.js"

export interface KnownRow {
  /** The number the review table shows the row by. */
  readonly number: number
  readonly label?: string
  readonly currency?: string
}

/** What the page knows besides the events. */
export interface ConsoleKnown {
  readonly stepTitle: (stepId: string) => string
  readonly row: (rowId: string) => KnownRow | undefined
  readonly fieldLabel: (key: string) => string
}

export const NOTHING_KNOWN: ConsoleKnown = { stepTitle: humanize, row: () => undefined, fieldLabel: humanize }

export type Piece =
  | string
  /** A name: a step's title, a field's label, a file's name. */
  | { readonly kind: "name"; readonly text: string }
  /** Free text someone wrote (comments, a reason): always text, in quotes. */
  | { readonly kind: "quote"; readonly text: string }
  /** A value before (when the record says it) and after. */
  | { readonly kind: "change"; readonly from?: string; readonly to: string }
  /** An id a person may need, shown short with the full id as its title. */
  | { readonly kind: "id"; readonly text: string; readonly full: string }

export interface Entry {
  /** The events this entry tells (one, or a group). */
  readonly events: ReadonlyArray<TaskEvent>
  readonly who?: string
  readonly what: ReadonlyArray<Piece>
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

const who = (actor: unknown, index: TimelineIndex | undefined): string => {
  if (typeof actor !== "string" || actor === "") return whoText({ kind: "unnamed" })
  if (actor.startsWith("agent:")) {
    const id = actor.slice("agent:".length)
    const name = index?.agentName(id)
    const w: Who = name === undefined ? { kind: "agent", id } : { kind: "agent", id, name }
    return whoText(w)
  }
  return actor
}

/** A stored value as the table would show it: an amount in the row's currency, a number in the reader's format, text in quotes. */
export const valueWords = (v: unknown, field: string | undefined, currency: string | undefined): string => {
  if (v === null || v === undefined || v === "") return "empty"
  if (typeof v === "number") return field !== undefined && isAmountKey(field) ? formatMoney(v, currency) : v.toLocaleString()
  if (typeof v === "boolean") return v ? "Yes" : "No"
  if (typeof v === "string") return `“${v}”`
  return JSON.stringify(v)
}

const rowPieces = (rowId: unknown, known: ConsoleKnown): ReadonlyArray<Piece> => {
  const id = str(rowId)
  if (id === undefined) return ["a row"]
  const r = known.row(id)
  if (r === undefined) return ["row ", { kind: "id", text: shortId(id), full: id }]
  return [`row ${r.number}`, ...(r.label !== undefined ? [" (", { kind: "name", text: r.label } as Piece, ")"] : [])]
}

const stepPieces = (stepId: unknown, known: ConsoleKnown): ReadonlyArray<Piece> => {
  const id = str(stepId)
  return id === undefined ? ["a step"] : [{ kind: "name", text: known.stepTitle(id) }]
}

const remarks = (p: Record<string, unknown>): ReadonlyArray<Piece> => {
  const said = [...new Set([str(p.comments), str(p.reason)].filter((s): s is string => s !== undefined))]
  return said.flatMap((text, i): ReadonlyArray<Piece> => [i === 0 ? ": " : "; ", { kind: "quote", text }])
}

const currencyFor = (p: Record<string, unknown>, known: ConsoleKnown) => {
  const id = str(p.rowId)
  return (id !== undefined ? known.row(id)?.currency : undefined) ?? currencyCode(p.currency)
}

/**
 * The old → new values of an edit; only the new one when the record has no old one, and none
 * when it has neither (a missing value is unknown, not "empty").
 */
const editChange = (p: Record<string, unknown>, known: ConsoleKnown): ReadonlyArray<Piece> => {
  const field = str(p.field)
  const currency = currencyFor(p, known)
  if (!Object.hasOwn(p, "newValue")) return []
  const to = valueWords(p.newValue, field, currency)
  return [Object.hasOwn(p, "oldValue") ? { kind: "change", from: valueWords(p.oldValue, field, currency), to } : { kind: "change", to }]
}

const withColon = (pieces: ReadonlyArray<Piece>): ReadonlyArray<Piece> => (pieces.length > 0 ? [": ", ...pieces] : [])
const withSpace = (pieces: ReadonlyArray<Piece>): ReadonlyArray<Piece> => (pieces.length > 0 ? [" ", ...pieces] : [])

const direct = (p: Record<string, unknown>): ReadonlyArray<Piece> => (p.via === "direct" ? [", directly in the ledger"] : [])

/** One event's words, or undefined when it is not the gateway's own record. */
const describe = (e: TaskEvent, known: ConsoleKnown, index: TimelineIndex | undefined): Omit<Entry, "events"> | undefined => {
  if (!isGatewayRecord(e)) return undefined
  const p = e.payload
  const by = { who: who(p.actor, index) }
  switch (e.type) {
    case "task.created": {
      const context = typeof p.context === "object" && p.context !== null && !Array.isArray(p.context) ? Object.entries(p.context) : []
      return {
        ...by,
        what: [
          "started ",
          ...(str(p.title) !== undefined ? [{ kind: "name", text: p.title as string } as Piece] : ["the task"]),
          ...(str(p.workflowId) !== undefined ? [` (${humanize(p.workflowId as string)})`] : []),
          ...(context.length > 0
            ? [" with ", context.map(([k, v]) => `${humanize(k).toLowerCase()} ${typeof v === "string" ? v : valueWords(v, k, undefined)}`).join(", ")]
            : [])
        ]
      }
    }
    case "row.edited":
      return {
        ...by,
        what: ["edited ", { kind: "name", text: known.fieldLabel(str(p.field) ?? "a field") }, " of ", ...rowPieces(p.rowId, known), ...withColon(editChange(p, known)), ...direct(p)]
      }
    case "row.rejected": {
      const was = str(p.previousStatus)
      return {
        ...by,
        what: ["rejected ", ...rowPieces(p.rowId, known), ...(was !== undefined && was !== "REJECTED" ? [`, previously ${statusWord(was).toLowerCase()}`] : []), ...direct(p)]
      }
    }
    case "step.claimed":
      return p.override === true
        ? { ...by, what: ["took over ", ...stepPieces(p.stepId, known), " from its agent"] }
        : { ...by, what: ["claimed ", ...stepPieces(p.stepId, known)] }
    case "step.released":
      return { ...by, what: ["released ", ...stepPieces(p.stepId, known)] }
    case "row.resolved":
      return { ...by, what: ["marked ", ...rowPieces(p.rowId, known), " resolved"] }
    case "file.stored":
      return {
        ...by,
        what: [
          "uploaded ",
          str(p.fileName) !== undefined ? { kind: "name", text: p.fileName as string } : "a file",
          typeof p.sizeBytes === "number" ? ` (${formatBytes(p.sizeBytes)})` : "",
          ...(str(p.source) !== undefined ? [` to ${humanize(p.source as string).toLowerCase()}`] : [])
        ]
      }
    case "data.ingested":
      return {
        ...by,
        what: [`added ${typeof p.count === "number" ? plural(p.count, "record") : "records"}`, ...(str(p.kind) !== undefined ? [` (${humanize(p.kind as string).toLowerCase()})`] : [])]
      }
    case "step.completed": {
      const verb = p.decision === "approve" ? "approved " : p.decision === "reject" ? "rejected " : "completed "
      return { ...by, what: [verb, ...stepPieces(p.stepId, known), ...(p.via === "link" ? [" through a decision link"] : []), ...remarks(p)] }
    }
    case "source.submitted": {
      const ids = (Array.isArray(p.documentIds) ? p.documentIds : Array.isArray(p.recordIds) ? p.recordIds : []).filter((x): x is string => typeof x === "string")
      const names = p.kind === "file" ? ids.map((id) => index?.fileName(id)) : []
      const what: ReadonlyArray<Piece> = p.kind === "file"
        ? names.length > 0 && names.every((n) => n !== undefined) ? [{ kind: "name", text: orList(names as Array<string>).replace(/ or /, " and ") }] : [plural(ids.length, "file")]
        : [plural(ids.length, "record")]
      return { what: [...what, ids.length === 1 ? " was submitted to " : " were submitted to ", ...stepPieces(p.stepId, known)] }
    }
    case "task.status_changed":
      return {
        what: str(p.to) !== undefined
          ? [
            "The task is now ",
            { kind: "name", text: statusWord(p.to as string).toLowerCase() },
            ...(str(p.from) !== undefined ? [` (was ${statusWord(p.from as string).toLowerCase()})`] : [])
          ]
          // A record without the new status: say what is known, not half a sentence.
          : ["The task's status changed", ...(str(p.from) !== undefined ? [` (was ${statusWord(p.from as string).toLowerCase()})`] : [])]
      }
    default:
      return undefined
  }
}

/** Events this close together, by one person, on one row, read as one entry. */
export const GROUP_WITHIN_MS = 10 * 60 * 1000

const groupable = (a: TaskEvent, b: TaskEvent): boolean => {
  if (a.type !== b.type || a.source !== "audit" || b.source !== "audit") return false
  if (a.payload.actor !== b.payload.actor) return false
  if (Math.abs(Date.parse(b.createdAt) - Date.parse(a.createdAt)) > GROUP_WITHIN_MS) return false
  if (a.type === "row.edited") return a.payload.rowId === b.payload.rowId && a.payload.via === b.payload.via
  return a.type === "row.rejected" && a.payload.via === b.payload.via
}

const groupWords = (list: ReadonlyArray<TaskEvent>, known: ConsoleKnown, index: TimelineIndex | undefined): Omit<Entry, "events"> => {
  const first = list[0]!
  const by = { who: who(first.payload.actor, index) }
  if (first.type === "row.edited") {
    const changes = list.flatMap((e, i): ReadonlyArray<Piece> => [
      i === 0 ? "" : "; ",
      { kind: "name", text: known.fieldLabel(str(e.payload.field) ?? "a field") },
      ...withSpace(editChange(e.payload, known))
    ])
    return { ...by, what: [`edited ${list.length} values of `, ...rowPieces(first.payload.rowId, known), ": ", ...changes, ...direct(first.payload)] }
  }
  const rows = list.flatMap((e, i): ReadonlyArray<Piece> => [i === 0 ? "" : i === list.length - 1 ? " and " : ", ", ...rowPieces(e.payload.rowId, known)])
  return { ...by, what: [`rejected ${list.length} rows: `, ...rows, ...direct(first.payload)] }
}

/**
 * The feed's entries, in seq order: the record's events in words (grouped where they belong
 * together); any other event as undefined words (the caller shows its type and payload).
 */
export const entriesOf = (
  events: ReadonlyArray<TaskEvent>,
  known: ConsoleKnown,
  index?: TimelineIndex
): ReadonlyArray<Entry | { readonly events: readonly [TaskEvent]; readonly what?: undefined }> => {
  const out: Array<Entry | { readonly events: readonly [TaskEvent]; readonly what?: undefined }> = []
  let run: Array<TaskEvent> = []
  const flush = () => {
    if (run.length === 0) return
    if (run.length === 1) {
      const words = describe(run[0]!, known, index)
      out.push(words === undefined ? { events: [run[0]!] } : { events: run, ...words })
    } else out.push({ events: run, ...groupWords(run, known, index) })
    run = []
  }
  for (const e of events) {
    if (run.length > 0 && groupable(run[run.length - 1]!, e) && describe(e, known, index) !== undefined) {
      run.push(e)
      continue
    }
    flush()
    run = [e]
  }
  flush()
  return out
}
