/** Start failures on SQLite exit (./startFailureCases.ts). */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe } from "vitest"
import { startFailureCases } from "./startFailureCases.js"

const dir = mkdtempSync(join(tmpdir(), "gateway-startfail-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("start failures on SQLite", { timeout: 60_000 }, () => {
  startFailureCases(
    async () => `file:${join(dir, `${Math.random().toString(36).slice(2)}.db`)}`,
    // Under a regular file: no directory can be made there, whoever runs the test.
    {
      url: async () => "file:/dev/null/gateway/workspace.db",
      line: /^Cannot start: Cannot create the directory of \/dev\/null\/gateway\/workspace\.db: ENOTDIR/
    }
  )
})
