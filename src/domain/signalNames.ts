/**
 * Which signal names a write (a file, a data ingest) may send. Step signals decide a step, so
 * each comes from the route that checks it: `approve` and `reject` from a decision (bound to the
 * person the edge names, four-eyes, claims), `user_action` from a row action. Sent with a file or
 * a data row they decided a step past those checks (a task approved by no one). A write's own
 * step signal is `file_submitted`, which completes an upload step with its source, a file or data
 * records (`source.submitted`), spelled exactly: a name that only read as it did nothing.
 *
 * Judged by the store, for every caller (the workspace service's API is served on the admin
 * listener too), and first by the gateway's data ingest and file pipeline (a file ingest's before
 * its fetch). Not in the contract's schemas, which the console and the typed client also bundle:
 * the skeleton's confusables table is the server's.
 */
import { FILE_SUBMITTED_SIGNAL, ROW_ACTION_SIGNAL } from "../api/stepSignals.js"
import { asLetters, skeleton } from "../lib/skeleton.js"
import { STEP_SIGNALS as DECIDING_SIGNALS } from "./engine.js"

/** The signals that act on a step: the engine's deciding ones, and a row action's. */
const STEP_SIGNALS: ReadonlyArray<string> = [...DECIDING_SIGNALS, ROW_ACTION_SIGNAL]

/**
 * A name as a reader tells it apart: the skeleton four-eyes compares people by, letters read as
 * above before and after it, without separators (spaces, punctuation, symbols, and `ー`, which the
 * table makes of dashes: `user action`, `user—action` and `userAction` read as `user_action`), and
 * `i` and `l` alike (the table reads `I` as `l` but Cyrillic `ӏ` as `i`; once case is folded,
 * `fiIe` would read as `fiie`).
 */
const readAs = (name: string) =>
  asLetters(skeleton(asLetters(name))).replace(/[\p{Z}\s\p{P}\p{S}\u30fc]/gu, "").replace(/i/g, "l")

let bySkeleton: ReadonlyMap<string, string> | undefined
// Made on first use: the skeleton loads the confusables table (src/lib/skeleton.ts).
const stepSignalsBySkeleton = () => (bySkeleton ??= new Map(STEP_SIGNALS.map((n) => [readAs(n), n])))

/** Why a write may not send `name` (a 400 naming signalName), or undefined. */
export const signalNameRefusal = (name: string): string | undefined => {
  const seen = stepSignalsBySkeleton().get(readAs(name))
  if (seen === undefined || name === FILE_SUBMITTED_SIGNAL) return undefined
  if (seen === FILE_SUBMITTED_SIGNAL) {
    return `signalName: ${JSON.stringify(name)} reads as ${JSON.stringify(FILE_SUBMITTED_SIGNAL)}: send it exactly so`
  }
  const what = name === seen
    ? `${JSON.stringify(name)} is a step signal`
    : `${JSON.stringify(name)} reads as the step signal ${JSON.stringify(seen)}`
  return `signalName: ${what}, which only ${seen === ROW_ACTION_SIGNAL ? "a row action" : "a decision"} on the task sends`
}
