/**
 * Start-up garbage handed back to the system once the process listens. Start-up promotes most of
 * what it allocates (layers, migrations, the seed, schema derivations) into the old generation,
 * then drops it: the old generation is left as sparse pages that a plain full collection marks
 * but does not move, so they stay committed and resident (22 MB committed for 15.6 MB live, about
 * 5 MB of pages an idle cell keeps for nothing). V8 moves live objects off sparse pages and
 * releases the emptied ones only in a memory-reducing collection, which the `gc` function of
 * `--expose-gc` (npm start) runs as its "last-resort" flavor: -4.5 MB of private memory per idle
 * cell, measured (bench/RESULTS.md, memory per cell).
 *
 * That flavor also drops the bytecode of every function not running (start-up's own code, never
 * run again); the first requests compile what they use again, once. It is one pause at start
 * (two full collections of a 15 MB heap), not a cost per request.
 */

/** The `gc` global of `--expose-gc` with V8's options. */
type Collect = (options: { readonly type: "major"; readonly execution: "sync"; readonly flavor: "last-resort" }) => void

/** Runs the memory-reducing collection when the process has `gc` (`--expose-gc`); false without it. */
export const collectStartupGarbage = (collect = (globalThis as { gc?: Collect }).gc): boolean => {
  if (collect === undefined) return false
  collect({ type: "major", execution: "sync", flavor: "last-resort" })
  return true
}
