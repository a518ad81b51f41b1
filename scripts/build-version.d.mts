/** Types of scripts/build-version.mjs. */
export declare const packageVersion: () => string
export declare const packageVersionPlugin: { readonly name: string; setup(build: unknown): void }
