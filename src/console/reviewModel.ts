/**
 * The review table's model, pure: the step's rows (`args.rows`), numbered as the step lists them
 * (the number a person sees and a confirmation names, stable when rows are re-sorted); the
 * columns of `displayHint.config.columns` in that order with labels, the rest on demand; the
 * row that gives the reason it needs attention; rows needing attention first; counts by status;
 * a cell's value as text in the row's currency and the reader's locale.
 */
import type { UiStep } from "../api/resources.js"
import { currencyCode, formatDate, formatMoney, humanize, isAmountKey } from "./words.js"

export type Scalar = string | number | boolean | null

export interface ReviewRow {
  readonly id: string
  /** 1-based, in the order the step lists its rows. */
  readonly number: number
  readonly status: string
  readonly fields: Readonly<Record<string, Scalar>>
  readonly editable: ReadonlyArray<string>
}

export type ColumnKind = "money" | "number" | "date" | "text"

export interface Column {
  readonly key: string
  readonly label: string
  readonly kind: ColumnKind
}

export const rowsOf = (step: UiStep): ReadonlyArray<ReviewRow> | undefined => {
  const rows = step.args.rows
  if (!Array.isArray(rows)) return undefined
  const out: Array<ReviewRow> = []
  rows.forEach((r: unknown, i) => {
    if (typeof r !== "object" || r === null) return
    const o = r as Record<string, unknown>
    if (typeof o.id !== "string" || typeof o.fields !== "object" || o.fields === null) return
    out.push({
      id: o.id,
      number: i + 1,
      status: String(o.status ?? ""),
      fields: ownScalars(o.fields as Record<string, unknown>),
      editable: Array.isArray(o.editable) ? o.editable.filter((f): f is string => typeof f === "string") : []
    })
  })
  return out
}

/**
 * A row's fields on a null prototype, so a column named `__proto__` or `constructor` reads as
 * absent (rendering Object.prototype as a child made Preact write its internals onto it), and
 * objects or arrays as their JSON (rendered raw, an object showed nothing and an array ran together).
 */
const ownScalars = (fields: Record<string, unknown>): Record<string, Scalar> => {
  const out: Record<string, Scalar> = Object.create(null)
  for (const [k, v] of Object.entries(fields)) {
    out[k] = v === null || typeof v === "string" || typeof v === "number" || typeof v === "boolean" ? v : v === undefined ? null : JSON.stringify(v)
  }
  return out
}

/** Rows that need a person, first; then the undecided; then the decided. Stable by number within each. */
const STATUS_ORDER: Readonly<Record<string, number>> = { NEEDS_ATTENTION: 0, PENDING: 1, APPROVED: 3, RESOLVED: 3, REJECTED: 4 }
const rank = (status: string) => STATUS_ORDER[status] ?? 2

export const sortForReview = (rows: ReadonlyArray<ReviewRow>): ReadonlyArray<ReviewRow> =>
  [...rows].sort((a, b) => rank(a.status) - rank(b.status) || a.number - b.number)

/** How many rows have each status, in review order. */
export const statusCounts = (rows: ReadonlyArray<ReviewRow>): ReadonlyArray<readonly [status: string, count: number]> => {
  const counts = new Map<string, number>()
  for (const r of rows) counts.set(r.status, (counts.get(r.status) ?? 0) + 1)
  return [...counts.entries()].sort((a, b) => rank(a[0]) - rank(b[0]))
}

/** The field that says why a row needs attention: `config.reasonField`, else `description` when rows have it. */
export const reasonFieldOf = (config: Record<string, unknown>, rows: ReadonlyArray<ReviewRow>): string | undefined => {
  if (typeof config.reasonField === "string") return config.reasonField
  return rows.some((r) => Object.hasOwn(r.fields, "description")) ? "description" : undefined
}

const kindOf = (key: string, rows: ReadonlyArray<ReviewRow>, declared: unknown): ColumnKind => {
  if (declared === "money" || declared === "currency" || declared === "amount") return "money"
  if (declared === "number" || declared === "date" || declared === "text") return declared
  const sample = rows.map((r) => r.fields[key]).find((v) => v !== null && v !== undefined && v !== "")
  if (typeof sample === "number") return isAmountKey(key) ? "money" : "number"
  if (typeof sample === "string" && /^\d{4}-\d{2}-\d{2}$/.test(sample)) return "date"
  return "text"
}

/**
 * The columns to show, in `config.columns`' order (entries are keys, or `{ key, title }`), and
 * the others the rows have, available on demand. Without `config.columns` every field shows,
 * the reason first. The reason field always shows.
 */
export const columnsOf = (
  config: Record<string, unknown>,
  rows: ReadonlyArray<ReviewRow>
): { readonly shown: ReadonlyArray<Column>; readonly others: ReadonlyArray<Column> } => {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.fields)))]
  const reason = reasonFieldOf(config, rows)
  const declared = Array.isArray(config.columns) ? config.columns : undefined
  const make = (key: string, title?: unknown, type?: unknown): Column => ({
    key,
    label: typeof title === "string" && title !== "" ? title : humanize(key),
    kind: kindOf(key, rows, type)
  })
  if (declared === undefined) {
    const ordered = reason !== undefined && keys.includes(reason) ? [reason, ...keys.filter((k) => k !== reason)] : keys
    return { shown: ordered.map((k) => make(k)), others: [] }
  }
  const shown: Array<Column> = []
  for (const entry of declared) {
    if (typeof entry === "string") shown.push(make(entry))
    else if (typeof entry === "object" && entry !== null) {
      const e = entry as Record<string, unknown>
      const key = [e.key, e.field, e.name].find((k): k is string => typeof k === "string")
      if (key !== undefined) shown.push(make(key, e.title ?? e.label ?? e.header, e.type ?? e.format))
    }
  }
  const unique = shown.filter((c, i) => shown.findIndex((d) => d.key === c.key) === i)
  if (reason !== undefined && !unique.some((c) => c.key === reason) && keys.includes(reason)) unique.unshift(make(reason))
  return { shown: unique, others: keys.filter((k) => !unique.some((c) => c.key === k)).map((k) => make(k)) }
}

/** The row's currency: its own `currency` field, else the step's `config.currency`. */
export const currencyOf = (row: ReviewRow, config: Record<string, unknown>): string | undefined =>
  currencyCode(row.fields.currency) ?? currencyCode(config.currency)

/** A value as the table shows it; "" when empty. */
export const cellText = (value: Scalar | undefined, kind: ColumnKind, currency: string | undefined): string => {
  if (value === null || value === undefined || value === "") return ""
  if (typeof value === "boolean") return value ? "Yes" : "No"
  if (typeof value === "number") return kind === "money" ? formatMoney(value, currency) : value.toLocaleString()
  // An amount stored as text ("1240.00") reads like its neighbours, in its currency.
  if ((kind === "money" || kind === "number") && PLAIN_NUMBER.test(value.trim())) return cellText(Number(value.trim()), kind, currency)
  if (kind === "date") return formatDate(value)
  return value
}

const PLAIN_NUMBER = /^-?\d+(\.\d+)?$/

/**
 * What an editor starts with: the stored value as typed, a number in the reader's decimal
 * separator ("1240,5" in German) without grouping or currency sign.
 */
export const draftOf = (value: Scalar | undefined, locale?: string): string =>
  value === null || value === undefined
    ? ""
    : typeof value === "number"
    // Latin digits whatever the locale's own (Arabic, Persian), so the draft reads back the same.
    ? value.toLocaleString(locale, { useGrouping: false, maximumFractionDigits: 20, numberingSystem: "latn" })
    : String(value)

/**
 * The value to send for what was typed, shaped like the value it replaces (`numeric`: a number
 * column, whose cell may be empty). A number may be typed as the reader writes it ("1.240,50" in
 * German, "1,240.50" in English) or plainly ("1240.5"); anything else is sent as typed and the
 * gateway's refusal says why.
 */
export const typedValue = (text: string, previous: Scalar, locale?: string, numeric = false): Scalar => {
  if (text.trim() === "") return null
  if (typeof previous === "number" || numeric) {
    const n = localNumber(text, locale)
    return n !== undefined ? n : text
  }
  if (typeof previous === "boolean") return text === "true" ? true : text === "false" ? false : text
  return text
}

/** A short name for a row in messages: "row 3 (Delta Air Lines)". */
export const ROW_LABEL_FIELDS = ["merchant", "name", "vendor", "payee", "description"]
export const rowLabel = (row: { readonly fields: Readonly<Record<string, unknown>> }): string | undefined =>
  ROW_LABEL_FIELDS.map((f) => row.fields[f]).find((v): v is string => typeof v === "string" && v !== "")

/** A number as typed in `locale` (its decimal separator, optional grouping in threes) or in plain form. */
export const localNumber = (text: string, locale?: string): number | undefined => {
  const parts = new Intl.NumberFormat(locale, { numberingSystem: "latn" }).formatToParts(-12345.6)
  const decimal = parts.find((p) => p.type === "decimal")?.value ?? "."
  const group = parts.find((p) => p.type === "group")?.value ?? ","
  // Arabic-Indic and Persian digits and separators, as a phone keyboard there types them, read as Latin.
  const t = text.trim().replace(/^\u2212/, "-")
    .replace(/[\u0660-\u0669]/g, (c) => String(c.charCodeAt(0) - 0x660))
    .replace(/[\u06f0-\u06f9]/g, (c) => String(c.charCodeAt(0) - 0x6f0))
    .replace(/\u066b/g, decimal)
    .replace(/\u066c/g, group)
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  // Spaces (French, Swiss) group with a narrow or no-break space; a typed plain space counts too.
  const g = /\s/.test(group) ? "[\\s\u00a0\u202f]" : esc(group)
  const d = esc(decimal)
  const local = new RegExp(`^-?(\\d{1,3}(${g}\\d{3})+|\\d+)(${d}\\d+)?$`)
  const n = local.test(t) ? Number(t.replace(new RegExp(g, "g"), "").replace(decimal, ".")) : PLAIN_NUMBER.test(t) ? Number(t) : NaN
  return Number.isFinite(n) ? n : undefined
}
