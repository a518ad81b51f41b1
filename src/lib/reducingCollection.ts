/**
 * Memory handed back to the system: V8's memory-reducing collection (the "last-resort" flavor of
 * the `gc` function `--expose-gc` gives, npm start), once after start and once whenever the server
 * goes idle after requests (src/http/server/nodeServer.ts collectWhenProcessIdle).
 *
 * A plain full collection marks and sweeps, but leaves sparse old-generation pages committed and
 * resident: start-up promotes most of what it allocates (layers, migrations, the seed, schema
 * derivations) and drops it (22 MB committed for 15.6 MB live, about 5 MB an idle cell kept for
 * nothing: -4.5 MB of private memory per idle cell, bench/RESULTS.md), and a burst leaves the same.
 * The memory-reducing flavor moves live objects off sparse pages and releases the emptied ones.
 * After a burst of uploads and task lists and 15 s idle, a cell's private memory was 113-186 MB
 * with the plain collection and 82-107 MB with this one (33 MB idle before the burst;
 * bench/PROFILE.md, issue 36's eleventh pass).
 *
 * That flavor also drops the bytecode of every function not running; the first requests after
 * it compile what they use again, once (200 task lists after the idle period: 1.19-1.34 ms each
 * against 1.21-1.37 ms after the plain collection). It is one pause of about 40 ms (two reducing
 * mark-compacts of 19-24 ms on a 16 MB heap, `--trace-gc`) while nothing has been asked of the
 * server for SVC_IDLE_COLLECT_MS, not a cost per request.
 */

/** The `gc` global of `--expose-gc` with V8's options. */
type Collect = (options: { readonly type: "major"; readonly execution: "sync"; readonly flavor: "last-resort" }) => void

/** One memory-reducing collection, or undefined when the process has no `gc` (no `--expose-gc`). */
export const reducingCollection = (collect = (globalThis as { gc?: Collect }).gc): (() => void) | undefined =>
  collect === undefined ? undefined : () => collect({ type: "major", execution: "sync", flavor: "last-resort" })

/** Runs the memory-reducing collection after start when the process has `gc`; false without it. */
export const collectStartupGarbage = (collect = (globalThis as { gc?: Collect }).gc): boolean => {
  const reduce = reducingCollection(collect)
  if (reduce === undefined) return false
  reduce()
  return true
}
