#!/usr/bin/env node
/**
 * The build `npm start` runs from: esbuild bundles of the gateway (src/main.ts -> dist/main.js)
 * and the `svc` CLI (src/cli/main.ts -> dist/cli.cjs, see CLI_ENTRY). The gateway is ESM for
 * Node 24, code-split so that what the sources load with a dynamic import (the docs pages, OTLP
 * export, ...) stays a chunk loaded on first use. Native and optional modules
 * stay in node_modules (EXTERNAL).
 *
 * Assets: a source file that names a file next to it with `new URL("<relative>", import.meta.url)`
 * (the demo fixture) gets that file copied to dist/assets/ and the reference rewritten to it, so
 * the built entry finds its assets wherever the build puts it.
 *
 * `node scripts/build.mjs [outdir]` (default dist). Writes <outdir>/build.json last: what was
 * built and from which inputs (scripts/build-if-stale.mjs compares against it).
 *
 * A build never pulls files from under a running process: it is written to a directory of its
 * own, then moved into outdir file by file (a rename each), entries last. Chunks are named by
 * content hash, so those of an earlier build stay (a process started from it may still load its
 * lazy chunks) until they are a day old and no longer part of the current build.
 */
import { build } from "esbuild"
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, extname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { clientStaleness } from "./build-client-stale.mjs"
import { buildClient } from "./build-client.mjs"
import { buildConsole } from "./build-console.mjs"
import { packageVersionPlugin } from "./build-version.mjs"

export const ROOT = fileURLToPath(new URL("..", import.meta.url))

/** What is bundled as ESM with code splitting: output name -> entry (relative to the root). */
// The workspace service (`npm run workspace`) is bundled beside the gateway, sharing its chunks:
// through tsx a start cost 1.8-2.0 s of CPU and 170-190 MB, built 0.6 s and 97 MB.
export const ENTRIES = { main: "src/main.ts", workspace: "src/workspace/server/main.ts" }

/**
 * The CLI, one CommonJS file (dist/cli.cjs): src/cli/bin.mjs compiles it with a V8 code cache
 * (dist/cli.cjs.cache, written by its first run) for the one file, which a module graph of ESM
 * chunks would need Node's compile cache directory for. Measured on Effect 3 and Node 20: 270 -> 165
 * ms of CPU for `svc health` (bench/PROFILE.md, S6).
 */
export const CLI_ENTRY = "src/cli/main.ts"

/** Native or optional modules a bundle cannot hold; resolved from node_modules at run time. */
const EXTERNAL = ["libsql", "@libsql/linux-*", "@libsql/darwin-*", "@libsql/win32-*", "bufferutil", "utf-8-validate"]

/** The Node the bundles run on (package.json engines: the pinned Node 24). */
const TARGET = "node24"

const ASSET_REF = /new URL\(\s*(["'])(\.{1,2}\/[^"'`]+)\1\s*,\s*import\.meta\.url\s*\)/g

/**
 * Copies assets named by `new URL("./x", import.meta.url)` into <outdir>/assets and points the
 * reference there; `copied` (source file -> its name under assets/) is the build's to read.
 */
const assetsPlugin = (outdir, copied) => ({
  name: "assets",
  setup(b) {
    b.onLoad({ filter: /\.[cm]?[jt]s$/ }, (args) => {
      if (args.path.includes(`${"/"}node_modules${"/"}`)) return undefined
      const source = readFileSync(args.path, "utf8")
      if (!source.includes("import.meta.url")) return undefined
      const contents = source.replace(ASSET_REF, (whole, quote, rel) => {
        const file = resolve(dirname(args.path), rel)
        let name = copied.get(file)
        if (name === undefined) {
          name = basename(file)
          for (let i = 1; [...copied.values()].includes(name); i++) name = `${basename(file, extname(file))}-${i}${extname(file)}`
          mkdirSync(join(outdir, "assets"), { recursive: true })
          copyFileSync(file, join(outdir, "assets", name))
          copied.set(file, name)
        }
        return `new URL(${quote}./assets/${name}${quote}, import.meta.url)`
      })
      return { contents, loader: extname(args.path).slice(1).replace(/^[cm]/, "") }
    })
  }
})

/**
 * `ws`, which @effect/platform-node's server imports (through NodeWS, a re-export of `ws` in
 * @effect/platform-node-shared) for WebSocket upgrades. The gateway serves none, so the module
 * is loaded only if an upgrade ever builds a WebSocketServer (or a WebSocket client is made):
 * measured about 1 MB of idle heap and 65 KB of code evaluated at start (on Effect 3).
 */
const lazyWsPlugin = {
  name: "lazy-ws",
  setup(b) {
    b.onResolve({ filter: /^ws$/ }, (args) =>
      args.importer.includes("@effect/platform-node-shared") && /NodeWS\.[cm]?js$/.test(args.importer)
        ? { path: "lazy-ws", namespace: "lazy-ws" }
        : undefined)
    b.onLoad({ filter: /.*/, namespace: "lazy-ws" }, () => ({
      contents: [
        "export class WebSocketServer { constructor(...args) { return new (require(\"ws\").WebSocketServer)(...args) } }",
        "export class WebSocket { constructor(...args) { return new (require(\"ws\").WebSocket)(...args) } }"
      ].join("\n"),
      loader: "js",
      resolveDir: ROOT
    }))
  }
}

/** What the lazy `node:tls` below stands in for: NodeSocket's uses of its `Tls` namespace. */
const LAZY_TLS_EXPORTS = ["createSecureContext", "connect", "TLSSocket"]

/**
 * `node:tls` for @effect/platform-node-shared's NodeSocket (reached through platform-node's
 * server for connection upgrades, which the gateway serves none of) loaded on first use: loading
 * `node:tls` makes Node read every CA certificate it trusts (about 2.5 MB of native memory, more
 * with NODE_EXTRA_CA_CERTS) in every process (bench/RESULTS.md, memory per cell). The build
 * fails if NodeSocket uses a part of `Tls` the stand-in lacks.
 */
const lazyTlsPlugin = {
  name: "lazy-tls",
  setup(b) {
    b.onResolve({ filter: /^(node:)?tls$/ }, (args) =>
      args.importer.includes("@effect/platform-node-shared") && /NodeSocket\.[cm]?js$/.test(args.importer)
        ? { path: "lazy-tls", namespace: "lazy-tls", pluginData: { importer: args.importer } }
        : undefined)
    b.onLoad({ filter: /.*/, namespace: "lazy-tls" }, (args) => {
      const source = readFileSync(args.pluginData.importer, "utf8")
      const names = /import \* as (\w+) from "node:tls"/.exec(source)
      if (names === null) return { errors: [{ text: `lazy-tls: ${args.pluginData.importer} no longer imports node:tls as a namespace` }] }
      const used = new Set([...source.matchAll(new RegExp(`\\b${names[1]}\\.(\\w+)`, "g"))].map((m) => m[1]))
      const missing = [...used].filter((name) => !LAZY_TLS_EXPORTS.includes(name))
      if (missing.length > 0) return { errors: [{ text: `lazy-tls: ${args.pluginData.importer} uses node:tls ${missing.join(", ")}, which the lazy stand-in lacks` }] }
      return {
        contents: [
          "const tls = () => process.getBuiltinModule(\"node:tls\")",
          "export const createSecureContext = (...args) => tls().createSecureContext(...args)",
          "export const connect = (...args) => tls().connect(...args)",
          "export class TLSSocket { constructor(...args) { return new (tls().TLSSocket)(...args) } }"
        ].join("\n"),
        loader: "js",
        resolveDir: ROOT
      }
    })
  }
}

/**
 * @effect/platform-node's internal/http.js requires `node:https` (and so `node:tls`, see above)
 * beside `node:http` for every importer, the server included; only its HTTP client uses https.
 * Here `https` is an object whose members load `node:https` when first read. The build fails if
 * an importer reads a member the stand-in lacks.
 */
const LAZY_HTTPS_MEMBERS = ["Agent", "request", "get"]
const lazyPlatformHttpsPlugin = {
  name: "lazy-platform-https",
  setup(b) {
    b.onLoad({ filter: /@effect[\\/]platform-node[\\/]dist[\\/]internal[\\/]http\.js$/ }, (args) => {
      const dist = dirname(dirname(args.path))
      const importers = readdirSync(dist).filter((f) => f.endsWith(".js"))
        .map((f) => readFileSync(join(dist, f), "utf8"))
        .filter((source) => /from "\.\/internal\/http\.js"/.test(source))
      const used = new Set(importers.flatMap((source) => [...source.matchAll(/\bhttps\.(\w+)/g)].map((m) => m[1])))
      const missing = [...used].filter((name) => !LAZY_HTTPS_MEMBERS.includes(name))
      if (missing.length > 0) return { errors: [{ text: `lazy-platform-https: @effect/platform-node reads https.${missing.join(", https.")}, which the lazy stand-in lacks` }] }
      return {
        contents: [
          "export const http = require(\"node:http\")",
          "const load = () => process.getBuiltinModule(\"node:https\")",
          `export const https = { ${LAZY_HTTPS_MEMBERS.map((name) => `get ${name}() { return load().${name} }`).join(", ")} }`
        ].join("\n"),
        loader: "js"
      }
    })
  }
}

/**
 * `node:http` through `require`, not as an ES module: Node builds an ES module's namespace from
 * every export of the builtin, and reading http's lazy `WebSocket`, `CloseEvent` and
 * `MessageEvent` loads Node's bundled undici (a 745 KB script compiled in every process) and
 * http2. Named imports become property reads on the CommonJS module, as for any CommonJS
 * dependency of the bundle.
 */
const httpAsCommonJsPlugin = {
  name: "http-as-commonjs",
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === "import-statement" || args.kind === "dynamic-import"
        ? { path: "node:http", namespace: "http-as-commonjs" }
        : undefined)
    b.onLoad({ filter: /.*/, namespace: "http-as-commonjs" }, () => ({
      contents: "module.exports = require(\"node:http\")",
      loader: "js",
      resolveDir: ROOT
    }))
  }
}

/**
 * effect's `Context.merge` flattens `self` (a copy of every service in the request's context,
 * with its overlays) before it looks at `that`. HttpApiBuilder merges each handler group's build
 * context into every request of the group, and the health group's is empty
 * (src/handlers/health.ts): each health check paid that copy for nothing (effect 4.1.0 to 4.1.5).
 * With `that` looked at first an empty merge is free: S1 33.0-35.7 against 35.3-39.9 us of CPU
 * per request (4 rounds each, taking turns). Both empty: `self` instead of `that`, the same
 * services. The build fails when the function no longer reads so (an upgrade: look again).
 */
const CONTEXT_MERGE_CHECKS = "  if (self.mapUnsafe.size === 0) return that;\n  if (that.mapUnsafe.size === 0) return self;\n"
const contextMergePlugin = {
  name: "context-merge-empty-first",
  setup(b) {
    b.onLoad({ filter: /[\\/]effect[\\/]dist[\\/]Context\.js$/ }, (args) => {
      const source = readFileSync(args.path, "utf8")
      const at = source.indexOf(CONTEXT_MERGE_CHECKS)
      if (at === -1 || source.indexOf(CONTEXT_MERGE_CHECKS, at + 1) !== -1) {
        return { errors: [{ text: `context-merge-empty-first: ${args.path} no longer has Context.merge's two emptiness checks once` }] }
      }
      const [selfFirst, thatFirst] = CONTEXT_MERGE_CHECKS.split("\n")
      return { contents: source.replace(CONTEXT_MERGE_CHECKS, `${thatFirst}\n${selfFirst}\n`), loader: "js" }
    })
  }
}

/** Moves every file under `from` to the same place under `to` (rename: atomic per file); entries last. */
const moveInto = (from, to, last) => {
  const files = []
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(dir, e.name))
      else files.push(relative(from, join(dir, e.name)))
    }
  }
  walk(from)
  files.sort((a, b) => Number(last.includes(a)) - Number(last.includes(b)) || last.indexOf(a) - last.indexOf(b))
  for (const f of files) {
    mkdirSync(dirname(join(to, f)), { recursive: true })
    renameSync(join(from, f), join(to, f))
  }
  return files
}

const DAY_MS = 24 * 60 * 60 * 1000

/** Chunks (and their maps) of earlier builds, once a day old. */
const pruneOldChunks = (outdir, current) => {
  for (const name of readdirSync(outdir)) {
    if (!/^chunk-.*\.js(\.map)?$/.test(name) || current.has(name)) continue
    const file = join(outdir, name)
    if (Date.now() - statSync(file).mtimeMs > DAY_MS) rmSync(file, { force: true })
  }
}

export const runBuild = async (outdir = join(ROOT, "dist")) => {
  const started = performance.now()
  mkdirSync(outdir, { recursive: true })
  const staging = join(outdir, `.staging-${process.pid}-${Date.now()}`)
  try {
    const built = await buildInto(staging, outdir, started)
    // The task console served at / (scripts/build-console.mjs): its own directory and manifest.
    await buildConsole(join(outdir, "console"))
    // The typed client package (scripts/build-client.mjs), when its own inputs changed.
    if (clientStaleness(ROOT, join(outdir, "client")) !== undefined) await buildClient(join(outdir, "client"))
    return { ...built, ms: performance.now() - started }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

const buildInto = async (staging, outdir, started) => {
  // One copier for both bundles: the fixture an entry reads (fixtures/demo.json) is an input
  // esbuild's metafile does not list, so an edit to it would leave dist/ "fresh".
  const copied = new Map()
  const assets = assetsPlugin(staging, copied)
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, entry]) => [name, join(ROOT, entry)])),
    outdir: staging,
    // Every output file in outdir itself: asset references are relative to it.
    chunkNames: "chunk-[hash]",
    splitting: true,
    bundle: true,
    platform: "node",
    format: "esm",
    target: TARGET,
    external: EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    // No keepNames: it wraps every function created at run time in a defineProperty call, which
    // measured 24-31 us of CPU per /v1/health request (137.5 vs 161.6 us, bench/PROFILE.md S6).
    sourcemap: "linked",
    legalComments: "none",
    metafile: true,
    logLevel: "error",
    plugins: [assets, lazyWsPlugin, lazyTlsPlugin, lazyPlatformHttpsPlugin, httpAsCommonJsPlugin, packageVersionPlugin, contextMergePlugin],
    // CommonJS dependencies inside an ESM bundle still call require().
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" }
  })
  const cli = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, CLI_ENTRY)],
    outfile: join(staging, "cli.cjs"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: TARGET,
    external: EXTERNAL,
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    metafile: true,
    logLevel: "error",
    plugins: [assets, packageVersionPlugin, contextMergePlugin],
    define: { "import.meta.url": "__bundleImportMetaUrl" },
    banner: { js: "var __bundleImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" }
  })
  asciiOnly(staging)
  // Files only: a plugin's virtual module (`namespace:path`) has no file to watch.
  const assetInputs = [...copied.keys()].map((file) => relative(ROOT, file).split("\\").join("/"))
  const inputs = [...new Set([...Object.keys(result.metafile.inputs), ...Object.keys(cli.metafile.inputs), ...assetInputs])]
    .filter((input) => !/^[a-z-]+:/.test(input))
    .filter((f) => !f.includes("node_modules/"))
    .sort()
  const entries = [...Object.keys(ENTRIES).map((name) => `${name}.js`), "cli.cjs"]
  writeFileSync(join(staging, "package.json"), JSON.stringify({ type: "module" }) + "\n")
  const outputs = [
    ...readdirSync(staging).filter((f) => !f.startsWith(".")),
    ...[...copied.values()].map((name) => `assets/${name}`)
  ]
  writeFileSync(
    join(staging, "build.json"),
    JSON.stringify({ builtAt: new Date().toISOString(), entries: ENTRIES, inputs, outputs }, null, 2) + "\n"
  )
  // A code cache of an earlier cli.cjs would be rejected anyway; the next run writes a new one.
  rmSync(join(outdir, "cli.cjs.cache"), { force: true })
  moveInto(staging, outdir, [...entries, "build.json"])
  pruneOldChunks(outdir, new Set(outputs))
  return { outdir, ms: performance.now() - started, inputs }
}

/**
 * esbuild escapes non-ASCII characters in strings, not in regular expression literals: one
 * `/…$/` makes V8 hold the whole file's source as a two-byte string (twice the memory). Every
 * non-ASCII code unit left becomes a \uXXXX escape, which means the same in a string, a template
 * or a regular expression (comments are gone: legalComments none).
 */
const asciiOnly = (dir) => {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".js") && !name.endsWith(".cjs")) continue
    const file = join(dir, name)
    const text = readFileSync(file, "utf8")
    // eslint-disable-next-line no-control-regex
    if (!/[^\x00-\x7f]/.test(text)) continue
    writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`))
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] !== undefined ? resolve(process.argv[2]) : undefined
  const { outdir: out, ms } = await runBuild(outdir)
  process.stderr.write(`built ${relative(process.cwd(), out) || "."} in ${ms.toFixed(0)} ms\n`)
}
