/**
 * One-file ESM bundles (esbuild, the compiler tsx already uses) of an entry point, written under
 * bench/.build so that the packages left external (native drivers) still resolve from
 * node_modules. S6 measures them next to the tsx entry: what a deployed build would run.
 */
import { build } from "esbuild"
import { mkdirSync } from "node:fs"
import { join } from "node:path"

/** Native or optional modules a bundle cannot hold. */
const EXTERNAL = ["libsql", "@libsql/linux-*", "@libsql/darwin-*", "@libsql/win32-*", "bufferutil", "utf-8-validate"]

/**
 * Bundles `entry` to `<outdir>/<name>.mjs` (returned). Dynamic imports become chunks of their
 * own (code splitting), loaded when first imported, as in the unbundled program.
 */
export const bundle = async (entry: string, outdir: string, name: string): Promise<string> => {
  mkdirSync(outdir, { recursive: true })
  await build({
    entryPoints: { [name]: entry },
    outdir,
    outExtension: { ".js": ".mjs" },
    chunkNames: "chunks/[name]-[hash]",
    splitting: true,
    // For bench/experiments/s1-attribute.ts: a profile's frames mapped to their sources.
    sourcemap: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node24",
    external: EXTERNAL,
    logLevel: "error",
    // CommonJS dependencies inside an ESM bundle still call require().
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" }
  })
  return join(outdir, `${name}.mjs`)
}
