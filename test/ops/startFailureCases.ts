/**
 * Start failures of the built process, the same on every store: each exits 1 within a few
 * seconds with one `Cannot start:` line naming what to change (on PostgreSQL a taken
 * port printed the line and the process stayed alive, holding its database connection).
 */
import { afterAll, expect, it } from "vitest"
import { freePort } from "../support/process.js"
import { freePortPair, holdPort, killAllBuilt, runUntilExit, spawnBuilt } from "./builtRun.js"

/** Generous: a failed start takes well under a second; the point is that it ends. */
export const EXIT_WITHIN_MS = 10_000

export const expectOneLineFailure = (
  result: { readonly code: number | "still running" | null; readonly afterMs: number; readonly output: string },
  line: RegExp,
  withinMs = EXIT_WITHIN_MS
) => {
  expect({ code: result.code, output: result.output }).toMatchObject({ code: 1 })
  expect(result.afterMs).toBeLessThan(withinMs)
  const reasons = result.output.split("\n").filter((l) => l.includes("Cannot start"))
  expect(reasons).toHaveLength(1)
  expect(reasons[0]).toMatch(line)
  // No stack trace, no Effect cause dump.
  expect(result.output).not.toMatch(/\n\s+at /)
}

export const startFailureCases = (
  database: () => Promise<string>,
  unreachable: { readonly url: () => Promise<string>; readonly line: RegExp }
) => {
  afterAll(killAllBuilt)

  it("a taken PORT: exit 1 with the line naming PORT", async () => {
    const held = await holdPort()
    try {
      const result = await runUntilExit({
        SVC_DATABASE_URL: await database(),
        HOST: "127.0.0.1",
        PORT: String(held.port),
        SVC_ADMIN_PORT: "0"
      })
      expectOneLineFailure(result, new RegExp(`^Cannot start: port ${held.port} on 127\\.0\\.0\\.1 is already in use \\(PORT, HOST\\)`))
    } finally {
      await held.close()
    }
  })

  it("a second gateway on the PORT of a running one (whose admin listener holds PORT + 1): the line names PORT", async () => {
    const port = await freePortPair()
    const first = spawnBuilt({ SVC_DATABASE_URL: await database(), HOST: "127.0.0.1", PORT: String(port) })
    try {
      const until = Date.now() + 20_000
      while (!/admin: +http:\/\/127\.0\.0\.1:\d+\/workspace/.test(first.output())) {
        if (Date.now() > until || first.child.exitCode !== null) throw new Error(`the first gateway did not start:\n${first.output()}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      const result = await runUntilExit({ SVC_DATABASE_URL: await database(), HOST: "127.0.0.1", PORT: String(port) })
      expectOneLineFailure(result, new RegExp(`^Cannot start: port ${port} on 127\\.0\\.0\\.1 is already in use \\(PORT, HOST\\)`))
    } finally {
      first.kill()
      await first.exited
    }
  })

  it("a taken admin port: exit 1 with the line naming SVC_ADMIN_PORT", async () => {
    const held = await holdPort()
    try {
      const result = await runUntilExit({
        SVC_DATABASE_URL: await database(),
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        SVC_ADMIN_PORT: String(held.port)
      })
      expectOneLineFailure(
        result,
        new RegExp(`^Cannot start: Cannot open the admin listener on http://127\\.0\\.0\\.1:${held.port} .*already in use \\(SVC_ADMIN_PORT, SVC_ADMIN_HOST\\)`)
      )
    } finally {
      await held.close()
    }
  })

  it("a database it cannot open: exit 1 with the line naming the database", async () => {
    const result = await runUntilExit({
      SVC_DATABASE_URL: await unreachable.url(),
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      SVC_ADMIN_PORT: "0"
    })
    expectOneLineFailure(result, unreachable.line)
  })
}
