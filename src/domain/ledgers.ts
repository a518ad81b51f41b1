/**
 * The per-ledger registry: which fields a reviewer may edit, how values are coerced, and
 * which statuses allow a reject or an edit. Every workspace implementation applies it.
 */
import type { Scalar } from "../api/resources.js"
import { charCount } from "../api/textLength.js"

export type Coerce = (value: Scalar) => { ok: true; value: Scalar } | { ok: false; message: string }

const decimal = (places: number): Coerce => (value) => {
  const n = typeof value === "number" ? value : typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : NaN
  if (!Number.isFinite(n) || Math.abs(n) >= 1e12) return { ok: false, message: "must be a decimal number" }
  if (Math.round(n * 10 ** places) / 10 ** places !== n) {
    return { ok: false, message: `must have at most ${places} decimal places` }
  }
  return { ok: true, value: n }
}

const text = (max: number, nullable = false): Coerce => (value) => {
  if (value === null && nullable) return { ok: true, value: null }
  if (typeof value !== "string" || value.trim() === "" || charCount(value) > max) {
    return { ok: false, message: `must be a non-empty string of at most ${max} characters` }
  }
  return { ok: true, value: value.trim() }
}

const pattern = (re: RegExp, what: string, normalize = (s: string) => s): Coerce => (value) =>
  typeof value === "string" && re.test(normalize(value.trim()))
    ? { ok: true, value: normalize(value.trim()) }
    : { ok: false, message: `must be ${what}` }

const isoDate: Coerce = (value) => {
  if (typeof value !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return { ok: false, message: "must be a date YYYY-MM-DD" }
  const d = new Date(`${value}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value)
    ? { ok: true, value }
    : { ok: false, message: "must be a real calendar date" }
}

export interface LedgerRules {
  readonly editable: Readonly<Record<string, Coerce>>
  readonly rejectableFrom: ReadonlyArray<string>
  readonly editableIn: ReadonlyArray<string>
  readonly rejectedStatus: string
  /** Where the `resolve_flag` row action (this gateway's extension) may start, and what it makes a row. */
  readonly resolvableFrom: ReadonlyArray<string>
  readonly resolvedStatus: string
}

export const LEDGERS: Readonly<Record<string, LedgerRules>> = {
  expenses: {
    editable: {
      amount_gross: decimal(2),
      amount_net: decimal(2),
      amount_tax: decimal(2),
      currency: pattern(/^[A-Z]{3}$/, "a 3-letter ISO 4217 currency code", (s) => s.toUpperCase()),
      merchant: text(256),
      category: text(128),
      description: text(2000, true),
      expense_date: isoDate,
      gl_account: text(64)
    },
    rejectableFrom: ["NEEDS_ATTENTION"],
    editableIn: ["NEEDS_ATTENTION"],
    rejectedStatus: "REJECTED",
    resolvableFrom: ["NEEDS_ATTENTION"],
    resolvedStatus: "RESOLVED"
  },
  journal_proposals: {
    editable: {
      amount: decimal(2),
      currency: pattern(/^[A-Z]{3}$/, "a 3-letter ISO 4217 currency code", (s) => s.toUpperCase()),
      debit_account: text(64),
      credit_account: text(64),
      memo: text(2000, true),
      posting_date: isoDate
    },
    rejectableFrom: ["NEEDS_ATTENTION"],
    editableIn: ["NEEDS_ATTENTION"],
    rejectedStatus: "REJECTED",
    resolvableFrom: ["NEEDS_ATTENTION"],
    resolvedStatus: "RESOLVED"
  }
}

/**
 * Ledger and field names come from clients: look them up as own properties only, so that
 * `constructor`, `valueOf` or `__proto__` are unknown names rather than Object.prototype members.
 */
const own = <A>(record: Readonly<Record<string, A>>, key: string): A | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined

export const ledgerRules = (ledger: string): LedgerRules | undefined => own(LEDGERS, ledger)

export type RowDecision<A> =
  | { readonly _tag: "ok"; readonly value: A }
  | { readonly _tag: "notFound" }
  | { readonly _tag: "badRequest"; readonly message: string; readonly currentStatus?: string; readonly code?: "INVALID_FIELD" }

/** Whether a row in `status` of `ledger` may be rejected; the new status when it may. */
export const decideReject = (ledger: string, status: string): RowDecision<string> => {
  const rules = ledgerRules(ledger)
  if (rules === undefined) return { _tag: "notFound" }
  return rules.rejectableFrom.includes(status)
    ? { _tag: "ok", value: rules.rejectedStatus }
    : { _tag: "badRequest", message: `Row cannot be rejected from status ${status}`, currentStatus: status }
}

/** Whether a flagged row (one that needs attention) of `ledger` may be marked resolved; the new status when it may. */
export const decideResolve = (ledger: string, status: string): RowDecision<string> => {
  const rules = ledgerRules(ledger)
  if (rules === undefined) return { _tag: "notFound" }
  return rules.resolvableFrom.includes(status)
    ? { _tag: "ok", value: rules.resolvedStatus }
    : { _tag: "badRequest", message: `Row cannot be marked resolved from status ${status}: only a row that needs attention can`, currentStatus: status }
}

/** Whether `field` may be set to `value` on a row in `status`; the coerced value when it may. */
export const decideEdit = (ledger: string, status: string, field: string, value: Scalar): RowDecision<Scalar> => {
  const rules = ledgerRules(ledger)
  if (rules === undefined) return { _tag: "notFound" }
  const coerce = own(rules.editable, field)
  if (coerce === undefined) {
    return {
      _tag: "badRequest",
      code: "INVALID_FIELD",
      message: `Field ${JSON.stringify(field.length > 64 ? `${field.slice(0, 64)}…` : field)} is not editable on ${ledger}; editable: ${Object.keys(rules.editable).join(", ")}`
    }
  }
  if (!rules.editableIn.includes(status)) {
    return { _tag: "badRequest", message: `Row in status ${status} cannot be edited`, currentStatus: status }
  }
  const result = coerce(value)
  return result.ok ? { _tag: "ok", value: result.value } : { _tag: "badRequest", message: `value for ${field}: ${result.message}` }
}
