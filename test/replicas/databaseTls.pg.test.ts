/**
 * TLS to PostgreSQL as README "Scaling out" documents it, against a server of this test's own
 * with `ssl=on` and a self-signed certificate (openssl): `sslmode=verify-full` with
 * `sslrootcert` connects over TLS; without the certificate's authority the start ends with one
 * line; libpq's `require` (`uselibpqcompat=true`) encrypts without checking. (`sslmode=require`
 * against a server without TLS: test/ops/startFailures.pg.test.ts.)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { chmodSync, chownSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectOneLineFailure } from "../ops/startFailureCases.js"
import { freePortPair, killAllBuilt, runUntilExit, spawnBuilt } from "../ops/builtRun.js"
import { findPostgresBin } from "../support/postgres.js"
import { freePort } from "../support/process.js"

const dir = mkdtempSync(join(tmpdir(), "pg-tls-"))
const cert = join(dir, "server.crt")
let server: ChildProcess | undefined
let base: URL

/** PostgreSQL refuses root: as root the cluster is the postgres user's (as test/support/postgres.ts does). */
const user = (): { uid: number; gid: number } | undefined =>
  process.getuid?.() === 0
    ? {
      uid: Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })),
      gid: Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }))
    }
    : undefined

beforeAll(async () => {
  const bin = findPostgresBin()
  const as = user()
  const key = join(dir, "server.key")
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"
  ], { stdio: "ignore" })
  chmodSync(key, 0o600)
  if (as !== undefined) for (const f of [dir, key, cert]) chownSync(f, as.uid, as.gid)
  const data = join(dir, "data")
  execFileSync(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], {
    stdio: "ignore",
    ...as
  })
  const port = await freePort()
  server = spawn(join(bin, "postgres"), [
    "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
    "-c", "ssl=on", "-c", `ssl_cert_file=${cert}`, "-c", `ssl_key_file=${key}`
  ], { stdio: "ignore", ...as })
  base = new URL(`postgres://postgres@127.0.0.1:${port}/postgres`)
  const deadline = Date.now() + 20_000
  for (;;) {
    const client = new Pg.Client({ connectionString: base.toString() })
    try {
      await client.connect()
      await client.end()
      break
    } catch (error) {
      await client.end().catch(() => {})
      if (Date.now() > deadline) throw error
      await new Promise((r) => setTimeout(r, 100))
    }
  }
}, 60_000)

afterAll(async () => {
  killAllBuilt()
  if (server?.pid !== undefined && server.exitCode === null) {
    const exited = new Promise((r) => server!.once("exit", r))
    process.kill(server.pid, "SIGINT")
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
    if (server.exitCode === null && server.signalCode === null) process.kill(server.pid, "SIGKILL")
  }
  rmSync(dir, { recursive: true, force: true })
})

const withParams = (params: Record<string, string>) => {
  const url = new URL(base)
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v)
  return url.toString()
}

/** Starts the built gateway on `url`, waits for /readyz, and answers whether its connections use TLS. */
const servesOverTls = async (url: string) => {
  const port = await freePortPair()
  const run = spawnBuilt({ SVC_DATABASE_URL: url, HOST: "127.0.0.1", PORT: String(port), SVC_ADMIN_PORT: "off" })
  try {
    const deadline = Date.now() + 60_000
    for (;;) {
      if (run.child.exitCode !== null) throw new Error(`exited ${run.child.exitCode}:\n${run.output()}`)
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status === 200, () => false)
      if (ready) break
      if (Date.now() > deadline) throw new Error(`not ready:\n${run.output()}`)
      await new Promise((r) => setTimeout(r, 100))
    }
    const client = new Pg.Client({ connectionString: base.toString() })
    await client.connect()
    try {
      const { rows } = await client.query<{ ssl: boolean }>(
        "SELECT s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name = 'tenant-gateway'"
      )
      expect(rows.length).toBeGreaterThan(0)
      return rows.every((r) => r.ssl)
    } finally {
      await client.end()
    }
  } finally {
    run.child.kill("SIGTERM")
    await run.exited
  }
}

describe("TLS to PostgreSQL", { timeout: 120_000 }, () => {
  it("sslmode=verify-full with sslrootcert: every connection of the gateway is TLS", async () => {
    expect(await servesOverTls(withParams({ sslmode: "verify-full", sslrootcert: cert }))).toBe(true)
  })

  it("sslmode=verify-full without the certificate's authority: exit 1, one line", async () => {
    const result = await runUntilExit({
      SVC_DATABASE_URL: withParams({ sslmode: "verify-full" }),
      HOST: "127.0.0.1",
      PORT: String(await freePort()),
      SVC_ADMIN_PORT: "off"
    })
    expectOneLineFailure(result, /^Cannot start: Cannot open the workspace database postgres:\/\/.*sslmode=verify-full: self[- ]signed certificate/)
  })

  it("uselibpqcompat=true&sslmode=require: encrypted without checking the certificate", async () => {
    expect(await servesOverTls(withParams({ uselibpqcompat: "true", sslmode: "require" }))).toBe(true)
  })

  it("no sslmode: no TLS (the server allows both here)", async () => {
    expect(await servesOverTls(base.toString())).toBe(false)
  })
})
