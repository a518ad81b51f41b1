/**
 * How many rows of a batch go into one multi-row INSERT. Each statement runs synchronously in the
 * driver, so a group is also how long the event loop waits; between groups it gets a turn.
 *
 * Bounded by rows (SQLite's 32,766 bound parameters: 1,000 rows of data records use 8,000) and by
 * the text the rows carry (their data and their source references): about 15 ms of event loop
 * per MiB here (S5's 1,000 events of 2 KB in 29 ms). Fewer, larger statements cost less per row:
 * S5 as groups of 250 rows read 54.9-55.6 ms of CPU per batch, as groups of 500 51.4 and as one
 * of 1,000 49.7 (bench/PROFILE.md, tenth pass).
 */
import { jsonText } from "../../api/jsonText.js"
import { toJson } from "./db.js"

export const INSERT_GROUP_ROWS = 1000
export const INSERT_GROUP_CHARS = 1024 * 1024

/**
 * Where the group that starts at `start` ends (exclusive), of `count` rows whose texts are
 * `charsOf(i)` long: at most `maxRows` rows, and rows are added while the group holds fewer than
 * `maxChars` characters (so a group passes it by at most its last row). Never empty. `charsOf` is
 * called once for each row the group takes, in order, and for no other.
 */
export const groupEnd = (
  start: number,
  count: number,
  charsOf: (i: number) => number,
  maxRows = INSERT_GROUP_ROWS,
  maxChars = INSERT_GROUP_CHARS
): number => {
  let end = start
  let chars = 0
  while (end < count && end - start < maxRows && (end === start || chars < maxChars)) {
    chars += charsOf(end)
    end++
  }
  return end
}

/** A data record's texts as stored: its data (remembered by jsonText) and its source reference. */
export interface RecordTexts {
  readonly data: string
  readonly sourceRef: string | null
}

/**
 * The texts of the group of `rows` that starts at `start` (`start` plus its length is where the
 * next begins). Both texts count: a source reference has no cap of its own, so a batch can carry
 * its bytes there as well as in the data.
 */
export const nextGroup = (
  rows: ReadonlyArray<{ readonly data: unknown; readonly sourceRef?: unknown }>,
  start: number,
  maxRows = INSERT_GROUP_ROWS,
  maxChars = INSERT_GROUP_CHARS
): ReadonlyArray<RecordTexts> => {
  const texts: Array<RecordTexts> = []
  groupEnd(start, rows.length, (i) => {
    const row = rows[i]!
    const t = { data: jsonText(row.data), sourceRef: row.sourceRef !== undefined ? toJson(row.sourceRef) : null }
    texts.push(t)
    return t.data.length + (t.sourceRef?.length ?? 0)
  }, maxRows, maxChars)
  return texts
}
