/**
 * The typed client as a package of its own -> <dist>/client/ (README "The typed client"):
 *
 * - `index.js`: src/client/index.ts bundled by esbuild as one ESM file, the contract (src/api)
 *   inlined, `effect` left as imports (the peer dependency, its HTTP and HttpApi modules
 *   included in Effect 4: an Effect program and the client must share one copy, or its services
 *   and errors are not the program's);
 * - `index.d.ts` and `types/`: declarations emitted by tsc (tsconfig.client.json);
 * - `package.json`: `@tenant-gateway/client`, the API's version (the repository's package.json
 *   `version`, which the OpenAPI documents also serve), `exports` with `types` and `import`;
 * - `build.json`: inputs and outputs, for scripts/build-if-stale.mjs (not part of the package).
 *
 * `npm pack ./dist/client` makes the tarball an integrator installs. The declarations need the
 * `typescript` dev dependency: without it (`npm install --omit=dev`) the JavaScript is still built
 * and the declarations are skipped with a warning (the gateway itself never needs them).
 *
 * Built into a sibling directory, then swapped in: the previous package is never half replaced.
 */
import { build } from "esbuild"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { packageVersion, packageVersionPlugin } from "./build-version.mjs"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

export const CLIENT_ENTRY = "src/client/index.ts"
export const CLIENT_TSCONFIG = "tsconfig.client.json"
export const CLIENT_PACKAGE_NAME = "@tenant-gateway/client"
/** Imported, not bundled: the client's peer dependencies. */
const PEERS = ["effect"]

const rootPackage = () => JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"))

const manifestOf = (version, peers) => ({
  name: CLIENT_PACKAGE_NAME,
  version,
  description: "Typed client of the tenant gateway's /v1 API and its agent registry, derived from the gateway's HttpApi contract",
  type: "module",
  exports: {
    ".": { types: "./index.d.ts", import: "./index.js", default: "./index.js" },
    "./package.json": "./package.json"
  },
  types: "./index.d.ts",
  files: ["index.js", "index.d.ts", "types"],
  sideEffects: false,
  // What it needs: Effect's FetchHttpClient calls AbortSignal.any (Node 20.3) for a streamed
  // body. test/client/package.test.ts runs the README's example on Node 24 and, where the machine
  // has one, on Node 20.
  engines: { node: ">=20.3" },
  peerDependencies: peers
})

/** Emits the declarations of the client's module graph into `outDir`; throws with tsc's messages. */
const emitDeclarations = (ts, outDir) => {
  const host = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, "\n")) } }
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, CLIENT_TSCONFIG), { outDir }, host)
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences })
  const result = program.emit(undefined, undefined, undefined, true)
  const problems = [...config.errors, ...result.diagnostics]
  if (problems.length > 0) {
    throw new Error(ts.formatDiagnostics(problems, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => ROOT, getNewLine: () => "\n" }))
  }
}

/** The typescript module, or undefined when it is not installed (a production install). */
const loadTypescript = async () => {
  try {
    createRequire(join(ROOT, "package.json")).resolve("typescript")
  } catch {
    return undefined
  }
  return (await import("typescript")).default
}

const filesUnder = (dir, base = dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name), base) : [relative(base, join(dir, e.name)).split("\\").join("/")])

export const buildClient = async (outdir = join(ROOT, "dist", "client")) => {
  const started = performance.now()
  mkdirSync(dirname(outdir), { recursive: true })
  const staging = mkdtempSync(join(dirname(outdir), `.${basename(outdir)}-staging-`))
  const old = `${staging}-old`
  try {
    const version = packageVersion()
    const dependencies = rootPackage().dependencies
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: [join(ROOT, CLIENT_ENTRY)],
      outfile: join(staging, "index.js"),
      bundle: true,
      // Node, browsers and bundlers: the client sends requests with fetch.
      platform: "neutral",
      format: "esm",
      target: "es2022",
      external: PEERS.flatMap((p) => [p, `${p}/*`]),
      // Readable: an integrator steps through it.
      legalComments: "none",
      metafile: true,
      logLevel: "error",
      plugins: [packageVersionPlugin]
    })
    const ts = await loadTypescript()
    if (ts !== undefined) {
      emitDeclarations(ts, join(staging, "types"))
      writeFileSync(join(staging, "index.d.ts"), `export * from "./types/client/index.js"\n`)
    } else {
      process.stderr.write(`dist/client: type declarations skipped (typescript is not installed: a dev dependency)\n`)
    }
    const peers = Object.fromEntries(PEERS.map((p) => [p, `^${dependencies[p]}`]))
    writeFileSync(join(staging, "package.json"), JSON.stringify(manifestOf(version, peers), null, 2) + "\n")
    const inputs = [...Object.keys(result.metafile.inputs), CLIENT_TSCONFIG]
      .filter((f) => !f.includes("node_modules/") && !/^[a-z-]+:/.test(f))
      .sort()
    const outputs = filesUnder(staging).sort()
    writeFileSync(
      join(staging, "build.json"),
      JSON.stringify({ builtAt: new Date().toISOString(), version, declarations: ts !== undefined, inputs, outputs }, null, 2) + "\n"
    )
    // Swap: the old package moves aside in one rename, the new one in another. Another build
    // finishing in between (svc and npm start at once) puts its own there: moved aside again.
    for (let attempt = 0; ; attempt++) {
      if (existsSync(outdir)) renameSync(outdir, `${old}-${attempt}`)
      try {
        renameSync(staging, outdir)
        break
      } catch (e) {
        if (attempt >= 3 || !["ENOTEMPTY", "EEXIST"].includes(e?.code)) throw e
      }
    }
    return { outdir, ms: performance.now() - started, inputs, outputs }
  } finally {
    rmSync(staging, { recursive: true, force: true })
    for (let attempt = 0; attempt <= 3; attempt++) rmSync(`${old}-${attempt}`, { recursive: true, force: true })
  }
}
