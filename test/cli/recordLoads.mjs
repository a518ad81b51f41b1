// Preload (`node --import ./recordLoads.mjs`) that appends the URL of every module the process
// resolves to the file named by RECORD_LOADS_FILE. Registered after tsx, so it sees final URLs.
import { appendFileSync } from "node:fs"
import { register, registerHooks } from "node:module"

register("./recordLoadsHooks.mjs", import.meta.url, { data: { out: process.env.RECORD_LOADS_FILE } })

// `require` calls (createRequire; modules loaded on first use) pass only synchronous hooks.
const out = process.env.RECORD_LOADS_FILE
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context)
    if (out !== undefined && context.conditions?.includes("require")) appendFileSync(out, `${result.url}\n`)
    return result
  }
})
