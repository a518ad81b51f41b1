/**
 * A gateway over a workspace service (SVC_WORKSPACE_URL) runs no embedded store, so the settings
 * only that store reads are ignored: it says so at start, one line each, instead of starting
 * without a word (a bad SVC_PUBLIC_URL started silently). An embedded gateway says nothing of it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, expect, it } from "vitest"
import { ignoredWithWorkspaceService } from "../../src/config/embeddedOnly.js"
import { freePort, type RunningService, startBuilt } from "../support/process.js"

const dir = mkdtempSync(join(tmpdir(), "gateway-embedded-only-"))
const running: Array<RunningService> = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  rmSync(dir, { recursive: true, force: true })
})

const IGNORED = /(SVC_\w+) is read by the embedded workspace only and is ignored with SVC_WORKSPACE_URL/g

it("names each set setting only the embedded store reads, and no other", () => {
  const warnings = ignoredWithWorkspaceService({
    SVC_PUBLIC_URL: "javascript:alert(1)",
    SVC_DATABASE_URL: "file:x.db",
    SVC_WEBHOOK_TIMEOUT_MS: "1000",
    SVC_DB_POOL_SIZE: "4",
    SVC_TENANT_SLUG: "acme",
    SVC_REQUEST_DEADLINE_MS: "5000"
  })
  expect(warnings.map((w) => w.split(" ")[0])).toEqual(["SVC_DATABASE_URL", "SVC_DB_POOL_SIZE", "SVC_PUBLIC_URL", "SVC_WEBHOOK_TIMEOUT_MS"])
  expect(ignoredWithWorkspaceService({ SVC_TENANT_SLUG: "acme" })).toEqual([])
})

it("the built gateway says so at start over a workspace service, and not when it runs the store", async () => {
  const over = await startBuilt({
    SVC_WORKSPACE_URL: `http://127.0.0.1:${await freePort()}`,
    SVC_TENANT_SLUG: "acme",
    SVC_PUBLIC_URL: "javascript:alert(1)",
    SVC_DATABASE_URL: pathToFileURL(join(dir, "unused.db")).href
  })
  running.push(over)
  // Logged before it listens; read once this process has taken in its output.
  await expect.poll(() => [...over.output().matchAll(IGNORED)].map((m) => m[1]).sort(), { timeout: 5_000 })
    .toEqual(["SVC_DATABASE_URL", "SVC_PUBLIC_URL"])
  const embedded = await startBuilt({
    SVC_PUBLIC_URL: "http://127.0.0.1:3000",
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href
  })
  running.push(embedded)
  expect(embedded.output()).not.toMatch(IGNORED)
}, 60_000)
