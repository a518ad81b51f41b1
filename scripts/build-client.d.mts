/** Types of scripts/build-client.mjs, for the tests. */
export declare const CLIENT_ENTRY: string
export declare const CLIENT_TSCONFIG: string
export declare const CLIENT_PACKAGE_NAME: string
export declare const buildClient: (outdir?: string) => Promise<{
  readonly outdir: string
  readonly ms: number
  readonly inputs: ReadonlyArray<string>
  readonly outputs: ReadonlyArray<string>
}>
