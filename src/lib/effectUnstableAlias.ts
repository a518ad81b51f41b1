/**
 * Run-time half of a documented workaround (the type half is `paths` in tsconfig.json, the
 * bundle's half an esbuild alias in scripts/build.mjs): @effect/sql-libsql 4.0.0-beta.98, the
 * newest SQLite driver for Effect 4 (as is @effect/sql-sqlite-node 4.0.0-beta.102), imports
 * `effect/unstable/sql/*` and `effect/unstable/reactivity/*`, which Effect 4.0 renamed to
 * `effect/sql/*` and `effect/reactivity/*`; loaded unmapped it fails with ERR_MODULE_NOT_FOUND
 * (reproduction: `node -e 'import("@effect/sql-libsql")'` beside effect 4.1.0).
 *
 * Importing this module registers a synchronous resolve hook (node:module registerHooks) that
 * maps those two prefixes; the driver must then be loaded with a dynamic import(), because a
 * static import is resolved before any module body runs. Remove once a driver built against
 * effect 4.x's own paths is released.
 */
import { registerHooks } from "node:module"

const renamed = /^effect\/unstable\/(sql|reactivity)\//

let registered = false
if (!registered) {
  registered = true
  registerHooks({
    resolve: (specifier, context, nextResolve) =>
      nextResolve(renamed.test(specifier) ? "effect/" + specifier.slice("effect/unstable/".length) : specifier, context)
  })
}
