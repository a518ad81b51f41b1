/**
 * A media type guessed from a file name. The `mime` package's tables (about 1,200 types, two
 * maps) are loaded by the first guess, not at start: an idle cell never names an upload
 * (bench/RESULTS.md, memory per cell). `require` stays a call at run time in the bundle,
 * resolved from node_modules like the native driver.
 */
import { createRequire } from "node:module"
import type Mime from "mime"

const requireLazily = createRequire(import.meta.url)
let tables: typeof Mime | undefined

/** `mime.getType(fileName)`: the registered type of the name's extension, or null. */
export const guessType = (fileName: string): string | null =>
  (tables ??= (requireLazily("mime") as { default: typeof Mime }).default).getType(fileName)
