/** Start failures on SQLite exit (./startFailureCases.ts). */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, it } from "vitest"
import { WORKSPACE_ENTRY } from "../support/process.js"
import { holdPort } from "./builtRun.js"
import { expectOneLineFailure, startFailureCases } from "./startFailureCases.js"

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

describe("npm run workspace: a taken port", { timeout: 60_000 }, () => {
  it("exit 1 with the line naming SVC_WORKSPACE_PORT (its own setting), not PORT", async () => {
    const held = await holdPort()
    try {
      const child = spawn(process.execPath, [WORKSPACE_ENTRY], {
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        env: {
          ...process.env,
          HOST: "127.0.0.1",
          SVC_WORKSPACE_PORT: String(held.port),
          SVC_DATABASE_URL: `file:${join(dir, "workspace-service.db")}`
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stdout.on("data", (d) => (output += d))
      child.stderr.on("data", (d) => (output += d))
      const started = performance.now()
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      clearTimeout(timer)
      expectOneLineFailure(
        { code, afterMs: performance.now() - started, output },
        new RegExp(`^Cannot start: port ${held.port} on 127\\.0\\.0\\.1 is already in use \\(SVC_WORKSPACE_PORT, HOST\\): stop what holds it or set SVC_WORKSPACE_PORT to a free port`),
        // tsx compiles the sources first.
        20_000
      )
    } finally {
      await held.close()
    }
  })
})
