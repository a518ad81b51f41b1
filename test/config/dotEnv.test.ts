/**
 * `.env` as editors and mistakes leave it (src/config/dotEnv.ts), read in process: a byte order
 * mark before the first name (it was read as part of the name, so that setting was neither used
 * nor warned about), and a path that is no regular file (a FIFO held the start until something
 * wrote to it; a link to /dev/zero read until memory ran out; both without a word).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { loadDotEnv } from "../../src/config/dotEnv.js"

const dir = mkdtempSync(join(tmpdir(), "dotenv-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe(".env's text", () => {
  it("a byte order mark before the first name is not part of it", () => {
    const file = join(dir, "bom.env")
    writeFileSync(file, "\uFEFFSVC_ADMIN_TOKEN=abcdefghijklmnopqrstuvwxyz\r\nPORT=4100\r\n")
    const env: NodeJS.ProcessEnv = {}
    expect([...loadDotEnv(file, env)?.applied ?? []].sort()).toEqual(["PORT", "SVC_ADMIN_TOKEN"])
    expect(env).toEqual({ SVC_ADMIN_TOKEN: "abcdefghijklmnopqrstuvwxyz", PORT: "4100" })
  })

  it("a byte order mark elsewhere is the value's own", () => {
    const file = join(dir, "inner.env")
    writeFileSync(file, "A=x\nB=\uFEFFy\n")
    const env: NodeJS.ProcessEnv = {}
    loadDotEnv(file, env)
    expect(env).toEqual({ A: "x", B: "\uFEFFy" })
  })
})

describe(".env that is no regular file: refused at once, saying what it is", () => {
  it("a FIFO (nothing writes to it)", () => {
    const fifo = join(dir, "fifo.env")
    execFileSync("mkfifo", [fifo])
    // A writer 3 s from now ends a read that blocked (this thread cannot time out a blocked
    // read): without the check the load would wait for it, then read nothing.
    const writer = spawn("timeout", ["6", "sh", "-c", `sleep 3; : > '${fifo}'`], { stdio: "ignore" })
    try {
      const started = performance.now()
      expect(() => loadDotEnv(fifo, {})).toThrow(`cannot read ${fifo}: not a regular file (a FIFO)`)
      expect(performance.now() - started).toBeLessThan(1000)
    } finally {
      writer.kill("SIGKILL")
    }
  })

  it("a link to /dev/zero", () => {
    const link = join(dir, "zero.env")
    symlinkSync("/dev/zero", link)
    expect(() => loadDotEnv(link, {})).toThrow(`cannot read ${link}: not a regular file (a character device)`)
  })

  it("a missing file is no file (nothing read), a broken link too", () => {
    const broken = join(dir, "broken.env")
    symlinkSync(join(dir, "nowhere"), broken)
    expect(loadDotEnv(join(dir, "absent.env"), {})).toBeUndefined()
    expect(loadDotEnv(broken, {})).toBeUndefined()
  })
})
