#!/usr/bin/env node
/**
 * Builds dist/ (scripts/build.mjs) unless it is up to date: `npm start` runs this first, so the
 * README's `npm install && npm start` builds on the first start and after every change, and
 * starts at once otherwise (a few milliseconds of stat calls).
 *
 * Stale when dist/build.json is missing, or any file the last build read (its `inputs`), the
 * build script, package.json or package-lock.json is newer than it, or one of its outputs is
 * gone. A source file added since is found through the file that imports it (changed, so newer).
 *
 * The console (dist/console, scripts/build-console.mjs) is checked the same way against its own
 * dist/console/build.json, and rebuilt alone when only it is stale. The typed client package
 * (dist/client, scripts/build-client.mjs) has its own manifest too: a stale one makes dist/ stale
 * (its inputs are the CLI's as well), and the build then rebuilds it (its declarations take tsc
 * some seconds, so a change to the server alone does not).
 *
 * `node scripts/build-if-stale.mjs [--check]`: --check only answers (exit 0 fresh, 1 stale).
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { changedInput, clientStaleness, readManifest } from "./build-client-stale.mjs"

export { clientStaleness }

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const DIST = join(ROOT, "dist")

/** Why dist/ must be rebuilt, or undefined when it is fresh. */
export const staleness = (root = ROOT, dist = DIST) => {
  const { why, manifest, builtAt } = readManifest(dist, "dist", "no build yet", "dist/build.json is unreadable")
  if (why !== undefined) return why
  return changedInput(root, [...(manifest.inputs ?? []), "scripts/build.mjs", "package.json", "package-lock.json"], builtAt) ??
    clientStaleness(root, join(dist, "client"))
}

/**
 * Why <dist>/console (scripts/build-console.mjs) must be rebuilt, or undefined when it is fresh:
 * the same rules against its own manifest. Here rather than beside the console's build, so that
 * checking (every `svc` start, bin.mjs) never loads esbuild.
 */
export const consoleStaleness = (root = ROOT, outdir = join(ROOT, "dist", "console")) => {
  const { why, manifest, builtAt } = readManifest(outdir, "dist/console", "no console build yet")
  if (why !== undefined) return why
  return changedInput(root, [...(manifest.inputs ?? []), "scripts/build-console.mjs", "package-lock.json"], builtAt)
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const why = staleness()
  // The console (dist/console) has its own manifest: it alone is rebuilt when only it changed.
  const consoleWhy = why === undefined ? consoleStaleness(ROOT, join(DIST, "console")) : undefined
  if (process.argv.includes("--check")) {
    const any = why ?? consoleWhy
    process.stdout.write(any === undefined ? "fresh\n" : `stale: ${any}\n`)
    process.exit(any === undefined ? 0 : 1)
  }
  if (why !== undefined) {
    process.stderr.write(`building dist/ (${why}) ...\n`)
    const { runBuild } = await import("./build.mjs")
    const { ms } = await runBuild(DIST)
    process.stderr.write(`built dist/ in ${(ms / 1000).toFixed(1)} s\n`)
  } else if (consoleWhy !== undefined) {
    process.stderr.write(`building dist/console (${consoleWhy}) ...\n`)
    const { buildConsole } = await import("./build-console.mjs")
    const { ms } = await buildConsole(join(DIST, "console"))
    process.stderr.write(`built dist/console in ${(ms / 1000).toFixed(1)} s\n`)
  }
}
