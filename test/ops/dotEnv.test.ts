/**
 * `.env` in the working directory is read as `.env.example` says (nothing read it):
 * the built process started in a directory with a `.env` takes its settings from it, except
 * those the environment sets; a `.env` it cannot read ends the start with one line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort, WORKSPACE_ENTRY } from "../support/process.js"
import { killAllBuilt, spawnBuilt } from "./builtRun.js"
import { expectOneLineFailure } from "./startFailureCases.js"

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "gateway-dotenv-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  killAllBuilt()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe(".env", { timeout: 60_000 }, () => {
  it("settings from .env in the working directory; the environment wins over the file", async () => {
    const dir = tempDir()
    const port = await freePort()
    writeFileSync(join(dir, ".env"), [
      "# as copied from .env.example and edited",
      "SVC_DATABASE_URL=file:./from-dotenv/workspace.db",
      "SVC_MAX_BODY_BYTES=100",
      "SVC_ADMIN_PORT=off",
      `export SVC_LOG_FORMAT="json"`,
      // The environment says otherwise: its PORT is used, not this one.
      "PORT=1",
      ""
    ].join("\n"))
    const run = spawnBuilt({ PORT: String(port), HOST: "127.0.0.1" }, { cwd: dir })
    try {
      const deadline = Date.now() + 30_000
      while (!(await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false))) {
        if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
        if (Date.now() > deadline) throw new Error(`not healthy:\n${run.output()}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      // SVC_MAX_BODY_BYTES=100 from the file.
      const big = await fetch(`http://127.0.0.1:${port}/v1/tasks/x/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pad: "x".repeat(200) })
      })
      expect(big.status).toBe(413)
      expect(await big.json()).toMatchObject({ statusCode: 413, message: "Request body exceeds the 100-byte limit" })
      const out = run.output()
      // The database the file names, relative to the working directory; no admin listener.
      expect(out).toContain(`database ${join(dir, "from-dotenv", "workspace.db")}`)
      expect(out).toContain("admin:     off (SVC_ADMIN_PORT=off)")
      expect(out).toContain(`settings: read ${join(dir, ".env")} (4 set from it; the environment's own PORT kept)`)
      // SVC_LOG_FORMAT=json from the file: the start-up lines are JSON.
      expect(out).toMatch(/^\{"time":/m)
    } finally {
      run.child.kill("SIGTERM")
      await run.exited
    }
  })

  it("a .env that cannot be read: exit 1, one line naming it", async () => {
    const dir = tempDir()
    mkdirSync(join(dir, ".env"))
    const run = spawnBuilt({ PORT: String(await freePort()), HOST: "127.0.0.1", SVC_ADMIN_PORT: "off" }, { cwd: dir })
    const timer = setTimeout(run.kill, 15_000)
    const { code, afterMs } = await run.exited
    clearTimeout(timer)
    expectOneLineFailure(
      { code, afterMs, output: run.output() },
      new RegExp(`^Cannot start: cannot read ${join(dir, ".env").replaceAll(".", "\\.")}: not a regular file \\(a directory\\)`)
    )
  })
})

describe(".env for npm run workspace", { timeout: 60_000 }, () => {
  it("the workspace service reads its settings from .env in the working directory too", async () => {
    const dir = tempDir()
    const port = await freePort()
    writeFileSync(join(dir, ".env"), [
      `SVC_WORKSPACE_PORT=${port}`,
      "HOST=127.0.0.1",
      "SVC_DATABASE_URL=file:./from-dotenv/workspace.db",
      // The environment says otherwise: its token is used, not this one.
      "SVC_ADMIN_TOKEN=from-the-file-0123456789",
      // Misspelt: said, not silently ignored.
      "SVC_WORKSPACE_PROT=4000",
      ""
    ].join("\n"))
    const token = "from-the-environment-0123456789"
    const run = spawnBuilt({ SVC_ADMIN_TOKEN: token }, { cwd: dir, entry: WORKSPACE_ENTRY })
    try {
      const deadline = Date.now() + 30_000
      const openapi = `http://127.0.0.1:${port}/workspace/openapi.json`
      while (!(await fetch(openapi, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.ok, () => false))) {
        if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
        if (Date.now() > deadline) throw new Error(`not serving on the port .env names:\n${run.output()}`)
        await new Promise((r) => setTimeout(r, 100))
      }
      // The file's token is shadowed by the environment's.
      expect((await fetch(openapi, { headers: { authorization: "Bearer from-the-file-0123456789" } })).status).toBe(401)
      const out = run.output()
      expect(out).toContain(`settings: read ${join(dir, ".env")} (4 set from it; the environment's own SVC_ADMIN_TOKEN kept)`)
      expect(out).toContain("SVC_WORKSPACE_PROT is not a setting of this workspace service and is ignored: did you mean SVC_WORKSPACE_PORT?")
      expect(out).toContain(join(dir, "from-dotenv", "workspace.db"))
      // Its log as the gateway's: SVC_LOG_FORMAT=auto writes JSON lines to a pipe (it wrote pretty
      // lines whatever the setting).
      expect(out).toMatch(/^\{"time":"[^"]+","level":"info","msg":"settings: read /m)
    } finally {
      run.child.kill("SIGTERM")
      await run.exited
    }
  })

  it("a bad SVC_LOG_LEVEL stops the workspace service's start, naming it", async () => {
    const dir = tempDir()
    writeFileSync(join(dir, ".env"), `SVC_WORKSPACE_PORT=${await freePort()}\nHOST=127.0.0.1\nSVC_LOG_LEVEL=loud\n`)
    const run = spawnBuilt({}, { cwd: dir, entry: WORKSPACE_ENTRY })
    const timer = setTimeout(run.kill, 15_000)
    const { code, afterMs } = await run.exited
    clearTimeout(timer)
    expectOneLineFailure({ code, afterMs, output: run.output() }, /^Cannot start: SVC_LOG_LEVEL="loud": expected one of trace, /)
  })
})
