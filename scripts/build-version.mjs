/**
 * The package's version in bundles. src/api/version.ts imports package.json for its `version`
 * (the API version); esbuild would otherwise bundle the whole file (dependencies, scripts) into
 * every bundle that holds the contract: the browser console and the typed client package.
 */
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const ROOT = fileURLToPath(new URL("..", import.meta.url))
const PACKAGE_JSON = join(ROOT, "package.json")

/** The `version` of the repository's package.json. */
export const packageVersion = () => JSON.parse(readFileSync(PACKAGE_JSON, "utf8")).version

/** esbuild plugin: the repository's package.json, imported by a source file, is `{ version }` only. */
export const packageVersionPlugin = {
  name: "package-version",
  setup(b) {
    b.onLoad({ filter: /[\\/]package\.json$/ }, (args) =>
      resolve(args.path) === PACKAGE_JSON
        ? { contents: JSON.stringify({ version: packageVersion() }), loader: "json" }
        : undefined)
  }
}
