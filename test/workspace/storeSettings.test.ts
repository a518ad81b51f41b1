/**
 * The store's settings: SVC_DATABASE_URL picks SQLite (file:) or PostgreSQL (postgres://); the
 * PostgreSQL settings refuse bad values naming the variable, the value and what it takes; logs
 * never carry the password of a database URL.
 */
import { quoteSetting } from "../../src/config/settingErrors.js"
import { describe, expect, it } from "vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import { describeStartFailure } from "../../src/http/server/failStart.js"
import { databaseLabel, databasePathOf, embeddedSettings } from "../../src/workspace/embedded/layer.js"
import { isPostgresUrl, redactUrl } from "../../src/workspace/embedded/pg.js"

const settingsFrom = (env: Record<string, string>) =>
  Effect.runPromise(Effect.result(embeddedSettings.parse(ConfigProvider.fromEnv({ env }))))

describe("store settings", () => {
  it("reads the PostgreSQL settings with their defaults", async () => {
    const parsed = await settingsFrom({ SVC_DATABASE_URL: "postgres://gw:pw@db:5432/cell", SVC_DB_POOL_SIZE: "25" })
    expect(parsed._tag).toBe("Success")
    if (parsed._tag === "Success") {
      expect(parsed.success).toMatchObject({ url: "postgres://gw:pw@db:5432/cell", poolSize: 25, statementTimeoutMs: 30_000, connectTimeoutMs: 5000, signalLeaseMs: 30_000 })
    }
  })

  it.each([
    ["SVC_DB_POOL_SIZE", "0", `SVC_DB_POOL_SIZE="0": expected a positive integer`],
    ["SVC_DB_STATEMENT_TIMEOUT_MS", "soon", `SVC_DB_STATEMENT_TIMEOUT_MS="soon": expected 0 or a positive integer`],
    ["SVC_DB_CONNECT_TIMEOUT_MS", "0", `SVC_DB_CONNECT_TIMEOUT_MS="0": expected a positive integer`],
    ["SVC_SIGNAL_LEASE_MS", "50", `SVC_SIGNAL_LEASE_MS="50": expected an integer of at least 100`]
  ])("%s=%s is refused naming the variable, the value and what it takes", async (name, value, message) => {
    const parsed = await settingsFrom({ [name]: value })
    expect(parsed._tag).toBe("Failure")
    if (parsed._tag === "Failure") expect(describeStartFailure(parsed.failure, { [name]: value })).toContain(message)
  })

  it("tells the stores apart by URL and never logs a password", () => {
    expect(isPostgresUrl("postgres://a@b/c")).toBe(true)
    expect(isPostgresUrl("postgresql://a@b/c")).toBe(true)
    expect(isPostgresUrl("file:./data/workspace.db")).toBe(false)
    expect(redactUrl("postgres://gw:s3cret@db:5432/cell")).toBe("postgres://gw:***@db:5432/cell")
    expect(databaseLabel("postgres://gw:s3cret@db/cell")).not.toContain("s3cret")
    const refused = databasePathOf("mysql://x")
    expect(refused.ok ? "" : refused.message).toBe(`SVC_DATABASE_URL must be a file: or postgres:// URL, got "mysql://x"`)
    // Nor another store's URL refused: its credentials masked, as a refused URL setting's are.
    const withPassword = databasePathOf("mysql://gw:S3CRETpass@db/cell")
    expect(withPassword.ok ? "" : withPassword.message).toBe(`SVC_DATABASE_URL must be a file: or postgres:// URL, got "mysql://gw:***@db/cell"`)
  })

  it("a refused URL setting is quoted without its credentials (a password, or a token as the user)", () => {
    expect(quoteSetting("SVC_PUBLIC_URL", "http://user:S3CRETpass@example.com/")).toBe(`"http://user:***@example.com/"`)
    expect(quoteSetting("SVC_WORKSPACE_URL", "https://tok3n@example.com")).toBe(`"https://***@example.com"`)
    expect(quoteSetting("SVC_PUBLIC_URL", "https://a:b:c@d@example.com/x@y")).toBe(`"https://a:***@d@example.com/x@y"`)
    expect(quoteSetting("SVC_PUBLIC_URL", "ftp:example.com")).toBe(`"ftp:example.com"`)
    expect(quoteSetting("SVC_PUBLIC_URL", "user:pass@example.com")).toBe(`"user:pass@example.com"`)
  })
})
