/**
 * A real PostgreSQL server for the tests: Debian's server binaries (the newest version under
 * /usr/lib/postgresql/<version>/bin, else initdb on PATH), a cluster initdb'd into a fresh temp
 * directory, listening on a free loopback port (and a unix socket in that directory), durability
 * off (fsync, synchronous_commit, full_page_writes): nothing here must survive a crash.
 *
 * PostgreSQL refuses to run as root: as root the cluster belongs to, and the server runs as,
 * the `postgres` system user; otherwise as the current user. The server is stopped by its pid
 * (SIGINT: fast shutdown) and the directory removed.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Pg from "pg"
import { freePort } from "./process.js"

const DEBIAN_ROOT = "/usr/lib/postgresql"

/** The directory holding initdb and postgres; a clear error naming what is missing otherwise. */
export const findPostgresBin = (): string => {
  const versions = existsSync(DEBIAN_ROOT)
    ? readdirSync(DEBIAN_ROOT).filter((v) => existsSync(join(DEBIAN_ROOT, v, "bin", "initdb"))).sort((a, b) =>
      Number.parseFloat(b) - Number.parseFloat(a)
    )
    : []
  if (versions[0] !== undefined) return join(DEBIAN_ROOT, versions[0], "bin")
  try {
    const initdb = execFileSync("sh", ["-c", "command -v initdb"], { encoding: "utf8" }).trim()
    if (initdb !== "") return initdb.slice(0, initdb.lastIndexOf("/"))
  } catch {
    // not on PATH either
  }
  throw new Error(
    `PostgreSQL server binary "initdb" not found (looked in ${DEBIAN_ROOT}/<version>/bin and on PATH): ` +
      "install Debian's postgresql package (apt-get install postgresql)"
  )
}

/** uid/gid to run the server as: the postgres system user when we are root. */
const runAs = (): { uid: number; gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    return { uid, gid }
  } catch {
    throw new Error("Running as root, and PostgreSQL refuses root: no `postgres` system user to run the server as")
  }
}

export interface RunningPostgres {
  /** postgres://... of the `postgres` database (create test databases through it). */
  readonly adminUrl: string
  readonly pid: number
  readonly stop: () => Promise<void>
}

const run = (bin: string, args: ReadonlyArray<string>, user: { uid: number; gid: number } | undefined) =>
  new Promise<void>((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"], ...user })
    let output = ""
    child.stdout!.on("data", (d) => (output += d))
    child.stderr!.on("data", (d) => (output += d))
    child.on("error", reject)
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${bin} exited with ${code}:\n${output}`))))
  })

const waitReady = async (url: string, server: ChildProcess, output: () => string) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    if (server.exitCode !== null) throw new Error(`postgres exited with ${server.exitCode}:\n${output()}`)
    const client = new Pg.Client({ connectionString: url })
    try {
      await client.connect()
      await client.query("SELECT 1")
      return
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`postgres did not accept connections: ${(error as Error).message}\n${output()}`)
      await new Promise((r) => setTimeout(r, 50))
    } finally {
      await client.end().catch(() => {})
    }
  }
}

export const startPostgres = async (): Promise<RunningPostgres> => {
  const bin = findPostgresBin()
  const user = runAs()
  const dir = mkdtempSync(join(tmpdir(), "pg-test-"))
  const cleanup = () => rmSync(dir, { recursive: true, force: true })
  let server: ChildProcess | undefined
  try {
    if (user !== undefined) chownSync(dir, user.uid, user.gid)
    const data = join(dir, "data")
    await run(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"], user)
    const port = await freePort()
    server = spawn(join(bin, "postgres"), [
      "-D", data, "-p", String(port), "-k", dir, "-c", "listen_addresses=127.0.0.1",
      "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
      "-c", "max_connections=300", "-c", "shared_buffers=32MB"
    ], { stdio: ["ignore", "pipe", "pipe"], ...user })
    let output = ""
    server.stdout!.on("data", (d) => (output = (output + d).slice(-20_000)))
    server.stderr!.on("data", (d) => (output = (output + d).slice(-20_000)))
    const exited = new Promise<void>((resolve) => server!.once("exit", () => resolve()))
    const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`
    await waitReady(adminUrl, server, () => output)
    const pid = server.pid!
    // A test run that dies without its teardown must not leave the server behind.
    const onExit = () => {
      try {
        process.kill(pid, "SIGQUIT")
      } catch {
        // already gone
      }
    }
    process.once("exit", onExit)
    return {
      adminUrl,
      pid,
      stop: async () => {
        process.off("exit", onExit)
        try {
          process.kill(pid, "SIGINT")
        } catch {
          // already gone
        }
        await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))])
        if (server!.exitCode === null && server!.signalCode === null) process.kill(pid, "SIGKILL")
        cleanup()
      }
    }
  } catch (error) {
    if (server?.pid !== undefined && server.exitCode === null) server.kill("SIGKILL")
    cleanup()
    throw error
  }
}

/** A new database on the server of `adminUrl` (empty, or a copy of `template`); its URL. */
export const createDatabase = async (adminUrl: string, prefix: string, template?: string): Promise<string> => {
  const name = `${prefix.replace(/[^a-z0-9_]/gi, "_").toLowerCase()}_${Math.random().toString(36).slice(2, 10)}`
  const client = new Pg.Client({ connectionString: adminUrl })
  await client.connect()
  try {
    // FILE_COPY: copying the files beats writing every page of the template to the WAL (fsync is off).
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${template ?? "template0"} STRATEGY = FILE_COPY`)
  } finally {
    await client.end()
  }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * A database with the workspace's migrations applied, made once per test file (worker) and
 * copied by CREATE DATABASE ... TEMPLATE: a copy costs a fraction of migrating anew.
 */
let migratedTemplate: Promise<string> | undefined
const templateOf = (adminUrl: string) =>
  (migratedTemplate ??= (async () => {
    const url = await createDatabase(adminUrl, "template")
    const [{ runMigrations }, { pgLayer }, Effect] = await Promise.all([
      import("../../src/workspace/embedded/migrations.js"),
      import("../../src/workspace/embedded/pg.js"),
      import("effect/Effect")
    ])
    // The pool closes with the scope: a template must have no connections when it is copied.
    await Effect.runPromise(Effect.scoped(Effect.provide(Effect.asVoid(runMigrations), pgLayer(url, { poolSize: 1 }))))
    return new URL(url).pathname.slice(1)
  })())

/**
 * A fresh database on the run's server (test/support/pgGlobalSetup.ts), migrated unless
 * `empty`; fails with the reason when the run has no server (the binaries are missing, or the
 * run selected no *.pg.test.ts).
 */
export const testDatabase = async (prefix: string, options: { readonly empty?: boolean } = {}): Promise<string> => {
  const { inject } = await import("vitest")
  const adminUrl = inject("pgAdminUrl")
  if (adminUrl === "") {
    throw new Error("No PostgreSQL server in this run: name the *.pg.test.ts file (or a directory) when running vitest")
  }
  return createDatabase(adminUrl, prefix, options.empty === true ? undefined : await templateOf(adminUrl))
}
