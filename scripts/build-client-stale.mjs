/**
 * Whether the typed client package (<dist>/client, scripts/build-client.mjs) is up to date: its
 * own module, without esbuild, so that scripts/build-if-stale.mjs (every start checks) and
 * scripts/build.mjs (which rebuilds it only when stale) both read it; build.mjs importing
 * build-if-stale.mjs instead would deadlock when build-if-stale.mjs is the entry (it awaits its
 * dynamic import of build.mjs at top level).
 */
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** The first of `inputs` (paths relative to `root`) gone or newer than `builtAt`, said as why. */
export const changedInput = (root, inputs, builtAt) => {
  for (const input of inputs) {
    let mtime
    try {
      mtime = statSync(join(root, input)).mtimeMs
    } catch {
      return `${input} is gone`
    }
    if (mtime > builtAt) return `${input} changed`
  }
  return undefined
}

/**
 * A build's manifest (<outdir>/build.json) with its time, or why the build is stale before its
 * inputs are read: no manifest (`absent`), an unreadable one (`unreadable`), or an output gone
 * (named after `label`, the folder as people see it). Every build of dist/ keeps one.
 */
export const readManifest = (outdir, label, absent, unreadable = absent) => {
  const manifestFile = join(outdir, "build.json")
  if (!existsSync(manifestFile)) return { why: absent }
  let manifest
  try {
    manifest = JSON.parse(readFileSync(manifestFile, "utf8"))
  } catch {
    return { why: unreadable }
  }
  const builtAt = statSync(manifestFile).mtimeMs
  for (const output of manifest.outputs ?? []) {
    if (!existsSync(join(outdir, output))) return { why: `${label}/${output} is missing` }
  }
  return { manifest, builtAt }
}

/**
 * Why <dist>/client (the typed client package, scripts/build-client.mjs) must be rebuilt, or
 * undefined when it is fresh. Built without declarations (no typescript installed), it is stale
 * once typescript is there.
 */
export const clientStaleness = (root = ROOT, outdir = join(ROOT, "dist", "client")) => {
  const { why, manifest, builtAt } = readManifest(outdir, "dist/client", "no client package build yet")
  if (why !== undefined) return why
  if (manifest.declarations === false && existsSync(join(root, "node_modules", "typescript", "package.json"))) {
    return "dist/client has no type declarations yet"
  }
  return changedInput(
    root,
    [...(manifest.inputs ?? []), "scripts/build-client.mjs", "scripts/build-version.mjs", "package.json", "package-lock.json"],
    builtAt
  )
}
