/** Types of scripts/build-if-stale.mjs, for the tests. */
export declare const staleness: (root?: string, dist?: string) => string | undefined
