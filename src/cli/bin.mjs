#!/usr/bin/env node
// The `tenant-svc` (alias `svc`) bin: the bundled CLI, dist/cli.cjs, built first when missing or
// older than the sources (scripts/build-if-stale.mjs; a fresh check is a few stat calls), and
// compiled with V8's code cache (dist/cli.cjs.cache, written after the first run): most of a
// command's start is compiling the bundle otherwise. `npm link` in the checkout puts both names
// on the PATH.
import { readFileSync, renameSync, writeFileSync } from "node:fs"
import Module, { createRequire } from "node:module"
import { dirname } from "node:path"
import { fileURLToPath } from "node:url"
import { Script } from "node:vm"
import { staleness } from "../../scripts/build-if-stale.mjs"

const why = staleness()
if (why !== undefined) {
  process.stderr.write(`tenant-svc: building dist/ (${why}) ...\n`)
  const { runBuild } = await import("../../scripts/build.mjs")
  await runBuild()
}

const file = fileURLToPath(new URL("../../dist/cli.cjs", import.meta.url))
const cacheFile = `${file}.cache`
let cachedData
try {
  cachedData = readFileSync(cacheFile)
} catch {
  // first run after a build
}
const script = new Script(Module.wrap(readFileSync(file, "utf8")), { filename: file, cachedData })
if (cachedData === undefined || script.cachedDataRejected === true) {
  // At exit: the cache then holds the functions this run compiled too.
  process.once("exit", () => {
    try {
      const tmp = `${cacheFile}.${process.pid}`
      writeFileSync(tmp, script.createCachedData())
      renameSync(tmp, cacheFile)
    } catch {
      // a read-only checkout: no cache, only a slower start
    }
  })
}
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(file), module, file, dirname(file))
