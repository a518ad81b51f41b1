/**
 * The URL's TLS parameters as the README's "TLS to the database" documents them (node-postgres 8's
 * reading, kept on @effect/sql-pg 4: src/workspace/embedded/pg.ts). No server needed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tlsOptionsOf } from "../../src/workspace/embedded/pg.js"

const dir = mkdtempSync(join(tmpdir(), "pg-tls-unit-"))
const ca = join(dir, "ca.pem")
writeFileSync(ca, "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n")
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const url = (query: string) => `postgres://u:p@db.internal:5432/gw${query === "" ? "" : `?${query}`}`

describe("TLS to PostgreSQL from the URL", () => {
  it("none or disable: no TLS; ssl=true: TLS, checked", () => {
    expect(tlsOptionsOf(url(""))).toBe(false)
    expect(tlsOptionsOf(url("sslmode=disable"))).toBe(false)
    expect(tlsOptionsOf(url("ssl=true"))).toBe(true)
  })

  it("verify-full, and require read as verify-full: TLS, certificate and name checked", () => {
    expect(tlsOptionsOf(url("sslmode=verify-full"))).toEqual({})
    expect(tlsOptionsOf(url("sslmode=require"))).toEqual({})
    expect(tlsOptionsOf(url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(ca)}`))).toEqual({
      ca: expect.stringContaining("BEGIN CERTIFICATE")
    })
  })

  it("uselibpqcompat=true: libpq's require encrypts without checking; verify-ca needs sslrootcert", () => {
    expect(tlsOptionsOf(url("uselibpqcompat=true&sslmode=require"))).toEqual({ rejectUnauthorized: false })
    const withCa = tlsOptionsOf(url(`uselibpqcompat=true&sslmode=require&sslrootcert=${encodeURIComponent(ca)}`))
    expect(withCa).toMatchObject({ ca: expect.any(String), checkServerIdentity: expect.any(Function) })
    expect(withCa).not.toHaveProperty("rejectUnauthorized")
    expect(() => tlsOptionsOf(url("uselibpqcompat=true&sslmode=verify-ca"))).toThrow(/sslrootcert/)
  })

  it("a sslrootcert that cannot be read fails", () => {
    expect(() => tlsOptionsOf(url(`sslmode=verify-full&sslrootcert=${encodeURIComponent(join(dir, "missing.pem"))}`)))
      .toThrow(/ENOENT/)
  })
})
