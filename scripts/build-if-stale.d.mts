/** Types of scripts/build-if-stale.mjs, for the tests. */
export declare const staleness: (root?: string, dist?: string) => string | undefined
export declare const consoleStaleness: (root?: string, outdir?: string) => string | undefined
export declare const clientStaleness: (root?: string, outdir?: string) => string | undefined
