/** Types of scripts/build-console.mjs, for the tests. */
export declare const CONSOLE_ENTRY: string
export declare const buildConsole: (outdir?: string) => Promise<{
  readonly outdir: string
  readonly ms: number
  readonly inputs: ReadonlyArray<string>
  readonly outputs: ReadonlyArray<string>
}>
