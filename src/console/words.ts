/**
 * People's words for what the API says in identifiers: field keys, status enums, step
 * components, provider ids, start-parameter patterns; and values in the reader's locale
 * (Intl: numbers, amounts in their currency, dates and times). Pure, so tests can call it.
 */

/** Abbreviations kept in capitals when a key is turned into words. */
const ACRONYMS = new Set(["gl", "id", "vat", "url", "iban", "bic", "po", "sku", "ap", "ar", "uk", "us", "eu", "api", "csv", "pdf"])

/** `amount_gross` -> "Amount gross", `glAccount` -> "GL account", `upload_receipts` -> "Upload receipts". */
export const humanize = (key: string): string => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[\s_-]+/)
    .filter((w) => w !== "")
    .map((w) => w.toLowerCase())
  if (words.length === 0) return key
  return words
    .map((w, i) => (ACRONYMS.has(w) ? w.toUpperCase() : i === 0 ? w[0]!.toUpperCase() + w.slice(1) : w))
    .join(" ")
}

const STATUS_WORDS: Readonly<Record<string, string>> = {
  IN_PROGRESS: "In progress",
  COMPLETED: "Completed",
  FAILED: "Failed",
  PENDING: "Not started",
  SKIPPED: "Skipped",
  NEEDS_ATTENTION: "Needs attention",
  APPROVED: "Approved",
  REJECTED: "Rejected",
  RESOLVED: "Resolved",
  ACTIVE: "Active"
}

/** A status enum as a word: `IN_PROGRESS` -> "In progress" (unknown ones humanized). */
export const statusWord = (status: string): string => STATUS_WORDS[status] ?? humanize(status)

const AWAITING_WORDS: Readonly<Record<string, string>> = {
  FILE_UPLOAD: "A file upload",
  TABLE_REVIEW: "A review of rows",
  APPROVAL: "An approval"
}

/** What an open task waits for, from its current step's component. */
export const awaitingWord = (component: string): string => AWAITING_WORDS[component] ?? humanize(component)

const PROVIDERS: Readonly<Record<string, string>> = {
  quickbooks_online: "QuickBooks Online",
  quickbooks: "QuickBooks",
  qbo: "QuickBooks Online",
  xero: "Xero",
  netsuite: "NetSuite",
  sage_intacct: "Sage Intacct",
  sage: "Sage",
  freshbooks: "FreshBooks",
  zoho_books: "Zoho Books",
  microsoft_dynamics: "Microsoft Dynamics",
  dynamics_365: "Dynamics 365",
  merge: "Merge",
  codat: "Codat",
  rutter: "Rutter"
}

/** A provider or service id as its product name: `quickbooks_online` -> "QuickBooks Online". */
export const providerName = (id: string): string => PROVIDERS[id.toLowerCase()] ?? humanize(id)

/** A workspace name with any provider id in it spelled as the product: "Local quickbooks_online" -> "Local QuickBooks Online". */
export const withProviderNames = (text: string): string =>
  text.replace(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[a-z]+\b/g, (w) => (Object.hasOwn(PROVIDERS, w) ? PROVIDERS[w]! : w))

/** Media types and extensions as people know them: `application/pdf` -> "PDF", `.csv` -> "CSV". */
export const fileTypeName = (type: string): string => {
  const t = type.toLowerCase()
  const known: Record<string, string> = {
    "application/pdf": "PDF",
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "text/csv": "CSV",
    "text/plain": "plain text",
    "application/json": "JSON",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Excel (XLSX)",
    "application/vnd.ms-excel": "Excel (XLS)"
  }
  if (Object.hasOwn(known, t)) return known[t]!
  if (t.startsWith(".")) return t.slice(1).toUpperCase()
  if (t.endsWith("/*")) return `any ${t.slice(0, -2)}`
  const sub = t.split("/")[1]
  return sub !== undefined && sub !== "" ? sub.toUpperCase() : type
}

/** "PDF or PNG", "CSV", "PDF, PNG or JPEG". */
export const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`

/**
 * The format a start parameter's pattern asks for, as a person writes it: `^\d{4}-(0[1-9]|1[0-2])$`
 * -> "YYYY-MM". Undefined when the pattern is not one of the shapes this knows (the caller then
 * says "in the expected format" rather than show a regular expression).
 */
const MAX_SPELLED = 32

export const patternFormat = (pattern: string): string | undefined => {
  let s = pattern.replace(/^\^/, "").replace(/\$$/, "")
  const month = /\((?:\?:)?0\[1-9\]\|1\[0-2\]\)|\((?:\?:)?0\[1-9\]\|1\[012\]\)/g
  const day = /\((?:\?:)?0\[1-9\]\|\[12\](?:\\d|\[0-9\])\|3\[01\]\)/g
  const hasMonth = month.test(s)
  month.lastIndex = 0
  s = s.replace(month, "MM").replace(day, "DD")
  // A repeat count past what a person would count out gives no hint (`\d{999999999}` threw, blanking the form).
  if ([...s.matchAll(/\{(\d+)\}/g)].some((m) => Number(m[1]) > MAX_SPELLED)) return undefined
  const isoDate = /^(?:\\d|\[0-9\])\{4\}\\?-(?:(?:\\d|\[0-9\])\{2\}|MM)\\?-(?:(?:\\d|\[0-9\])\{2\}|DD)$/.test(s)
  s = s.replace(/(?:\\d|\[0-9\])\{(\d+)\}/g, (_, n: string) => ((hasMonth || isoDate) && n === "4" ? "YYYY" : "9".repeat(Number(n))))
  s = s.replace(/\\d|\[0-9\]/g, "9")
  s = s.replace(/\[A-Z\]\{(\d+)\}/g, (_, n: string) => "A".repeat(Number(n))).replace(/\[a-z\]\{(\d+)\}/g, (_, n: string) => "a".repeat(Number(n)))
  s = s.replace(/\\([-.\/ _:])/g, "$1")
  // A year, a month and a day in ISO order however the pattern spells the day or month: "YYYY-MM-DD", not "9999-99-99".
  if (isoDate) s = "YYYY-MM-DD"
  return /[\\[\](){}*+?|^$]/.test(s) || s === "" ? undefined : s
}

// ---- values in the reader's locale ----------------------------------------------------------

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })
const dateOnly = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" })
const dayHeading = new Intl.DateTimeFormat(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" })

/** An ISO time in the reader's locale ("Nov 1, 2026, 9:05 AM"); the text itself when it is not a time. */
export const formatTime = (iso: string): string => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : dateTime.format(d)
}

/** A calendar date (`2026-10-04`) in the reader's locale, read as that day wherever the reader is. */
export const formatDate = (ymd: string): string => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(ymd)
  if (m === null) return ymd
  const d = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])))
  return Number.isNaN(d.getTime()) ? ymd : new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" }).format(d)
}

/** The day of an ISO time, for grouping a timeline: "Sunday, November 1, 2026". */
export const formatDay = (iso: string): string => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : dayHeading.format(d)
}

export const formatDateOnly = (iso: string): string => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : dateOnly.format(d)
}

const moneyFormats = new Map<string, Intl.NumberFormat>()

/** A valid ISO 4217 code for `code` (case-insensitive: `usd` is USD), or undefined. */
const knownCurrencies = new Map<string, string | undefined>()
export const currencyCode = (code: unknown): string | undefined => {
  if (typeof code !== "string" || !/^[A-Za-z]{3}$/.test(code)) return undefined
  // Asked for every row at every render: checked once per code.
  if (knownCurrencies.has(code)) return knownCurrencies.get(code)
  const upper = code.toUpperCase()
  let valid: string | undefined
  try {
    new Intl.NumberFormat(undefined, { style: "currency", currency: upper })
    valid = upper
  } catch {
    valid = undefined
  }
  knownCurrencies.set(code, valid)
  return valid
}

/** An amount in its currency ("$1,240.00"), or as a plain number when no currency is known. */
export const formatMoney = (amount: number, currency: string | undefined): string => {
  if (currency === undefined) return amount.toLocaleString(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  let f = moneyFormats.get(currency)
  if (f === undefined) {
    f = new Intl.NumberFormat(undefined, { style: "currency", currency })
    moneyFormats.set(currency, f)
  }
  return f.format(amount)
}

/** Field keys that hold amounts of money (formatted in the row's currency). */
export const isAmountKey = (key: string): boolean =>
  /(^|_)(amount|total|net|gross|tax|vat|price|cost|balance|debit|credit|fee)(_|$)/i.test(key) || /Amount$|^amount/.test(key)

/** "1 row", "4 rows". */
export const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString()} ${n === 1 ? one : many}`

// ---- the inbox ------------------------------------------------------------------------------

const AWAITING_PLURALS: Readonly<Record<string, string>> = {
  FILE_UPLOAD: "File uploads",
  TABLE_REVIEW: "Reviews of rows",
  APPROVAL: "Approvals"
}

/** A component as a heading for a count of them: `APPROVAL` -> "Approvals". */
export const awaitingPlural = (component: string): string => AWAITING_PLURALS[component] ?? humanize(component)

/** An agent as a person can tell it apart: its name when known, else "the agent" and the start of its id. */
export const agentWord = (id: string, name?: string): string =>
  name !== undefined && name !== "" ? `the agent ${name}` : `the agent ${id.slice(0, 8)}`

/**
 * Who a step waits for, in words: `["ann@acme.example", "group:controllers"]` -> "ann@acme.example
 * or the controllers group"; an agent's `agent:<uuid>` is "the agent 5f0c8e7a" (its name when
 * `agentName` knows it); none: "anyone".
 */
export const assigneesWord = (assignees: ReadonlyArray<string>, agentName: (id: string) => string | undefined = () => undefined): string => {
  const words = assignees.map((a) =>
    groupOf(a) !== undefined
      ? `the ${groupOf(a)} group`
      : a.startsWith("agent:")
      ? agentWord(a.slice("agent:".length), agentName(a.slice("agent:".length)))
      : a)
  return words.length === 0 ? "anyone" : orList([...new Set(words)])
}

/**
 * The key a person or group is granted by, as the gateway compares assignees
 * (src/domain/actorSkeleton.ts `actorKey`): the same text up to compatibility form and case.
 */
export const grantKey = (name: string): string => name.normalize("NFKC").toUpperCase().toLowerCase()

/** The group an assignee names (`group:<name>`, the prefix in any case, as the gateway reads it), else undefined. */
export const groupOf = (assignee: string): string | undefined =>
  grantKey(assignee.slice(0, 6)) === "group:" ? assignee.slice(6) : undefined

/** Priorities that say nothing by themselves: the ordinary level. */
const ORDINARY_PRIORITIES = new Set(["normal", "medium", "default", "standard"])

/**
 * Which priorities on a list are worth showing (README "The task console"): a priority says
 * something only against the others. The most common one is the list's usual level and is said
 * once (`common`, unless it is the ordinary level); a task is marked only where its priority
 * differs from it. "High priority" on every task says nothing.
 */
export const priorityMarks = (priorities: ReadonlyArray<string>): { readonly common?: string; readonly marked: (p: string) => boolean } => {
  const counts = new Map<string, number>()
  for (const p of priorities) counts.set(p, (counts.get(p) ?? 0) + 1)
  let common: string | undefined
  for (const [p, n] of counts) if (common === undefined || n > counts.get(common)!) common = p
  return {
    ...(common !== undefined && common.trim() !== "" && !ORDINARY_PRIORITIES.has(common.toLowerCase()) ? { common } : {}),
    marked: (p) => p !== common && p.trim() !== ""
  }
}

const UNITS: ReadonlyArray<readonly [Intl.NumberFormatOptions["unit"] & string, number]> = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000]
]

/** How long since `iso`, in the largest whole unit and the reader's locale: "3 days", "5 minutes", "less than a minute". */
export const elapsed = (iso: string, now: number): string => {
  const ms = now - new Date(iso).getTime()
  if (Number.isNaN(ms)) return iso
  for (const [unit, size] of UNITS) {
    if (ms >= size) {
      return new Intl.NumberFormat(undefined, { style: "unit", unit, unitDisplay: "long" }).format(Math.floor(ms / size))
    }
  }
  return "less than a minute"
}
