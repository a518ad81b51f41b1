import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    // @effect/sql-libsql 4.0.0-beta.98 imports effect/unstable/{sql,reactivity}/*, which effect
    // 4.1.0 calls effect/{sql,reactivity}/* (src/lib/effectUnstableAlias.ts). The driver stays
    // external (node_modules is), so Node loads it and the resolve hook maps its imports; this
    // alias does the same should vitest's module runner ever load it (inlined).
    alias: [{ find: /^effect\/unstable\/(sql|reactivity)\//, replacement: "effect/$1/" }]
  },
  test: {
    include: ["test/**/*.test.ts"],
    // One PostgreSQL server for the run (*.pg.test.ts files use it); the task console built
    // (dist/console) when stale: test/console serves it from real processes.
    globalSetup: ["test/support/pgGlobalSetup.ts", "test/console/globalSetup.ts"],
    server: {
      deps: {
        // Loaded by Node, where src/lib/effectUnstableAlias.ts's resolve hook maps its imports.
        external: [/@effect\/sql-libsql/]
      }
    },
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
})
