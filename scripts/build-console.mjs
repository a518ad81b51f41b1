/**
 * The task console (src/console, a Preact SPA) -> <dist>/console/: `main-<hash>.js` and
 * `main-<hash>.css` (content-hashed, so served immutable), `index.html` naming them, a `.gz` and
 * a `.br` beside every file (compressed once here, so the gateway never compresses per request),
 * and `build.json` (inputs, outputs, and each file's ETag and type) written last, which
 * src/gateway/console.ts reads and scripts/build-if-stale.mjs compares against.
 *
 * Built like the gateway (scripts/build.mjs): into a staging directory, then moved in file by
 * file, index.html and build.json last; hashed files of an earlier build stay a day (a page
 * loaded from it may still ask for them).
 */
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import { packageVersionPlugin } from "./build-version.mjs"

const ROOT = fileURLToPath(new URL("..", import.meta.url))

export const CONSOLE_ENTRY = "src/console/main.tsx"
const TEMPLATE = "src/console/index.html"
const TYPES = { ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".html": "text/html; charset=utf-8" }
const DAY_MS = 24 * 60 * 60 * 1000

const typeOf = (name) => TYPES[name.slice(name.lastIndexOf("."))] ?? "application/octet-stream"

export const buildConsole = async (outdir = join(ROOT, "dist", "console")) => {
  const started = performance.now()
  mkdirSync(outdir, { recursive: true })
  const staging = join(outdir, `.staging-${process.pid}-${Date.now()}`)
  try {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: { main: join(ROOT, CONSOLE_ENTRY) },
      outdir: staging,
      entryNames: "[name]-[hash]",
      bundle: true,
      platform: "browser",
      format: "esm",
      target: "es2022",
      jsx: "automatic",
      jsxImportSource: "preact",
      minify: true,
      legalComments: "none",
      metafile: true,
      logLevel: "error",
      define: { "process.env.NODE_ENV": "\"production\"" },
      // The contract's API_VERSION reads package.json: only its version goes into the page.
      plugins: [packageVersionPlugin]
    })
    const built = Object.keys(result.metafile.outputs).map((f) => relative(staging, join(ROOT, f)))
    const script = built.find((f) => f.endsWith(".js"))
    const style = built.find((f) => f.endsWith(".css"))
    const html = readFileSync(join(ROOT, TEMPLATE), "utf8")
      // Relative: the page is served at the gateway's root, or under a proxy's path prefix.
      .replace("%SCRIPT%", `console/${script}`)
      .replace("%STYLE%", `console/${style}`)
    writeFileSync(join(staging, "index.html"), html)
    const files = {}
    for (const name of [...built, "index.html"]) {
      const bytes = readFileSync(join(staging, name))
      writeFileSync(join(staging, `${name}.gz`), gzipSync(bytes, { level: 9 }))
      writeFileSync(
        join(staging, `${name}.br`),
        brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } })
      )
      files[name] = { type: typeOf(name), etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"`, size: bytes.length }
    }
    const inputs = [...Object.keys(result.metafile.inputs).filter((f) => !f.includes("node_modules/")), TEMPLATE].sort()
    const outputs = Object.keys(files).flatMap((f) => [f, `${f}.gz`, `${f}.br`])
    writeFileSync(join(staging, "build.json"), JSON.stringify({ builtAt: new Date().toISOString(), inputs, outputs, files }, null, 2) + "\n")
    const last = ["index.html", "index.html.gz", "index.html.br", "build.json"]
    const order = readdirSync(staging).sort((a, b) => Number(last.includes(a)) - Number(last.includes(b)) || last.indexOf(a) - last.indexOf(b))
    for (const name of order) renameSync(join(staging, name), join(outdir, name))
    const current = new Set([...outputs, "build.json"])
    for (const name of readdirSync(outdir)) {
      if (name.startsWith(".") || current.has(name)) continue
      if (Date.now() - statSync(join(outdir, name)).mtimeMs > DAY_MS) rmSync(join(outdir, name), { force: true })
    }
    return { outdir, ms: performance.now() - started, inputs, outputs }
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { ms } = await buildConsole(process.argv[2])
  process.stderr.write(`built the console in ${ms.toFixed(0)} ms\n`)
}
