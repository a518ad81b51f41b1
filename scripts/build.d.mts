/** Types of scripts/build.mjs, for the tests that build. */
export declare const ROOT: string
export declare const ENTRIES: Readonly<Record<string, string>>
export declare const runBuild: (outdir?: string) => Promise<{ readonly outdir: string; readonly ms: number; readonly inputs: ReadonlyArray<string> }>
