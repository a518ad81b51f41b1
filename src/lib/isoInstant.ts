/**
 * One spelling per instant for times that are ordered as text (the inbox's waiting_since: its
 * index, its ORDER BY and its cursor compare stored text, on SQLite and PostgreSQL alike). As
 * text, `2026-01-01T00:00:00Z` sorts after `2026-01-01T00:00:00.500Z` (`.` is below `Z`) and an
 * offset (`+01:00`) sorts by its local hour; in toISOString's form (`YYYY-MM-DDTHH:mm:ss.sssZ`,
 * UTC, always milliseconds) text order is instant order.
 */

/** ISO 8601 dates and date-times this takes, with an optional fraction and offset. */
const ISO = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/

/**
 * The instant `text` names, as toISOString writes it; any other text as it is (what is not an
 * ISO 8601 time is not guessed at). A date-time with no offset is taken as UTC: Date.parse would
 * read it in the machine's zone, and the order would depend on where the process runs.
 */
export const isoInstant = (text: string): string => {
  const m = ISO.exec(text)
  if (m === null) return text
  const hasTime = text.includes("T")
  const ms = Date.parse(hasTime && m[1] === undefined ? `${text}Z` : text)
  return Number.isFinite(ms) ? new Date(ms).toISOString() : text
}
