/**
 * Start failures found by operating the built process as a stranger would (an attack
 * pass), beyond test/ops/startFailures*.test.ts: each exits 1 within seconds with one line that
 * says what to change, and a SIGTERM during a start that hangs is honoured within the grace.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { freePort } from "../support/process.js"
import { killAllBuilt, runUntilExit, spawnBuilt } from "./builtRun.js"
import { expectOneLineFailure } from "./startFailureCases.js"

const dir = mkdtempSync(join(tmpdir(), "gateway-startattack-"))
afterAll(() => {
  killAllBuilt()
  rmSync(dir, { recursive: true, force: true })
})

/** A TCP server on loopback; `onConnection` decides what a connecting client gets. */
const listen = async (onConnection: (socket: Socket) => void) => {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on("error", () => {})
    onConnection(socket)
  })
  const port = await new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
  )
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      server.close(() => resolve())
    })
  return { port, close }
}

/** A "PostgreSQL" that accepts connections and never answers (a dropped route, a hung server). */
const blackhole = () => listen(() => {})

/** A PostgreSQL authentication message: 'R', its length, its code, then `data`. */
const authentication = (code: number, data: string) => {
  const body = Buffer.concat([Buffer.alloc(4), Buffer.from(data)])
  body.writeInt32BE(code, 0)
  const header = Buffer.alloc(5)
  header.write("R", 0)
  header.writeInt32BE(4 + body.length, 1)
  return Buffer.concat([header, body])
}

/**
 * A "PostgreSQL" that asks for a password with SCRAM-SHA-256, as production servers do: the
 * start-up message gets AuthenticationSASL, the client's first SCRAM message the server's.
 */
const wantsPassword = () =>
  listen((socket) => {
    let messages = 0
    socket.on("data", () => {
      messages++
      if (messages === 1) socket.write(authentication(10, "SCRAM-SHA-256\0\0"))
      else if (messages === 2) socket.write(authentication(11, "r=clientnonceservernonce,s=c2FsdA==,i=4096"))
    })
  })

describe("start failures an operator meets", { timeout: 60_000 }, () => {
  it("SVC_DATABASE_URL naming a directory: the line says it is a directory, not a driver code", async () => {
    const db = join(dir, "a-directory")
    mkdirSync(db, { recursive: true })
    const result = await runUntilExit({
      SVC_DATABASE_URL: `file:${db}`,
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      SVC_ADMIN_PORT: "0"
    })
    expectOneLineFailure(result, /^Cannot start: Cannot open the workspace database .*a-directory: it is a directory/)
    expect(result.output).not.toMatch(/ConnectionFailed|: 14"/)
  })

  it("a PostgreSQL that never answers: exit 1 after SVC_DB_CONNECT_TIMEOUT_MS, the line naming that setting", async () => {
    const db = await blackhole()
    try {
      const result = await runUntilExit({
        SVC_DATABASE_URL: `postgres://gw:secret@127.0.0.1:${db.port}/gw`,
        SVC_DB_CONNECT_TIMEOUT_MS: "1000",
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        SVC_ADMIN_PORT: "0"
      })
      expectOneLineFailure(result, /^Cannot start: Cannot open the workspace database .*SVC_DB_CONNECT_TIMEOUT_MS=1000/)
    } finally {
      await db.close()
    }
  })

  it("a PostgreSQL that wants a password the URL does not give: the line says so", async () => {
    const db = await wantsPassword()
    try {
      const result = await runUntilExit({
        SVC_DATABASE_URL: `postgres://gw@127.0.0.1:${db.port}/gw`,
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        SVC_ADMIN_PORT: "0"
      })
      expectOneLineFailure(
        result,
        /^Cannot start: Cannot open the workspace database postgres:\/\/gw@127\.0\.0\.1:\d+\/gw: the server asks for a password and SVC_DATABASE_URL has none/
      )
      expect(result.output).not.toContain("client password must be a string")
    } finally {
      await db.close()
    }
  })

  it("SVC_ADMIN_PORT equal to PORT: refused as a setting, not as a port some other process holds", async () => {
    const port = String(await freePort())
    const result = await runUntilExit({
      SVC_DATABASE_URL: `file:${join(dir, "same-port.db")}`,
      HOST: "127.0.0.1",
      PORT: port,
      SVC_ADMIN_PORT: port
    })
    expectOneLineFailure(result, new RegExp(`^Cannot start: SVC_ADMIN_PORT=${port} is PORT's own port`))
    expect(result.output).not.toContain("stop what holds it")
  })

  it("SIGTERM while the start hangs on the database: exit within the grace period, not after the connect timeout", async () => {
    const db = await blackhole()
    try {
      const run = spawnBuilt({
        SVC_DATABASE_URL: `postgres://gw:secret@127.0.0.1:${db.port}/gw`,
        SVC_DB_CONNECT_TIMEOUT_MS: "60000",
        SVC_SHUTDOWN_GRACE_MS: "1000",
        HOST: "127.0.0.1",
        PORT: String(await freePort()),
        SVC_ADMIN_PORT: "0"
      })
      const timer = setTimeout(run.kill, 40_000)
      // Once it is waiting for the database.
      while (!run.output().includes("workspace: database")) await new Promise((r) => setTimeout(r, 50))
      const signalled = performance.now()
      run.child.kill("SIGTERM")
      const { code, afterMs } = await run.exited
      clearTimeout(timer)
      const stoppedAfter = performance.now() - signalled
      // @effect/sql-pg 4's connect is interrupted by the signal: the start stops at once and the
      // (empty) drain is clean, exit 0. (node-postgres's connect ignored the interruption; the
      // grace period's backstop then ended the process with exit 1, src/http/server/Drain.ts.)
      expect({ code, output: run.output() }).toMatchObject({ code: 0 })
      // The grace is 1 s; the connect timeout 60 s. Generous: the point is that it ends.
      expect(stoppedAfter).toBeLessThan(15_000)
      expect(afterMs).toBeLessThan(30_000)
      expect(run.output()).toMatch(/SIGTERM received: draining .*SVC_SHUTDOWN_GRACE_MS/)
      expect(run.output()).toMatch(/shutdown: drained in \d+ ms/)
    } finally {
      await db.close()
    }
  })
})
