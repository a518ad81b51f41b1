/**
 * The checkpoint worker starts on first need (src/workspace/embedded/checkpointer.ts): an idle
 * or lightly written database never pays for its thread; a log past the PASSIVE threshold, or a
 * scheduled TRUNCATE of a log past the inline size, starts it; a small log is truncated inline.
 */
import { createClient } from "@libsql/client"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import * as Exit from "effect/Exit"
import { mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { startCheckpointer } from "../../src/workspace/embedded/checkpointer.js"
import { waitFor } from "../support/waitFor.js"

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const walSize = (file: string) => {
  try {
    return statSync(`${file}-wal`).size
  } catch {
    return 0
  }
}

describe("the lazy checkpoint worker", () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })

  const setup = async (options: { intervalMs: number; passiveBytes: number; inlineBytes: number }) => {
    const dir = mkdtempSync(join(tmpdir(), "svc-ckpt-"))
    const file = join(dir, "db.sqlite")
    const db = createClient({ url: `file:${file}` })
    await db.execute("PRAGMA journal_mode = WAL")
    await db.execute("PRAGMA wal_autocheckpoint = 0")
    await db.execute("CREATE TABLE t (b BLOB)")
    let inlineRuns = 0
    const scope = Effect.runSync(Scope.make())
    const checkpointer = await Effect.runPromise(Scope.provide(startCheckpointer({
      path: file,
      walLimitBytes: 64 * 1024 * 1024,
      unavailable: (reason) => {
        throw new Error(reason)
      },
      inline: async () => {
        inlineRuns++
        await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
      },
      ...options
    }), scope))
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
    cleanups.push(() => db.close())
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const write = (bytes: number) => db.execute({ sql: "INSERT INTO t VALUES (?)", args: [new Uint8Array(bytes)] })
    return { file, checkpointer, write, inlineRuns: () => inlineRuns }
  }

  it("stays unstarted while the log is small, truncating it inline on schedule", async () => {
    const t = await setup({ intervalMs: 300, passiveBytes: 4 * 1024 * 1024, inlineBytes: 1024 * 1024 })
    await t.write(64 * 1024)
    expect(walSize(t.file)).toBeGreaterThan(0)
    await waitFor("the write-ahead log to be truncated", () => walSize(t.file) === 0, { timeoutMs: 5000, everyMs: 50 })
    expect(walSize(t.file)).toBe(0)
    expect(t.inlineRuns()).toBeGreaterThan(0)
    expect(t.checkpointer.workerStarted()).toBe(false)
  })

  it("starts the worker once the log passes the PASSIVE threshold", async () => {
    const t = await setup({ intervalMs: 0, passiveBytes: 256 * 1024, inlineBytes: 1024 * 1024 })
    await t.write(16 * 1024)
    await sleep(1200)
    expect(t.checkpointer.workerStarted()).toBe(false)
    await t.write(1024 * 1024)
    await waitFor("the checkpoint worker to start", () => t.checkpointer.workerStarted(), { timeoutMs: 5000, everyMs: 50 })
    expect(t.checkpointer.workerStarted()).toBe(true)
    // The worker checkpoints: a TRUNCATE through it empties the log.
    const result = await t.checkpointer.checkpoint("TRUNCATE")
    expect(result.busy).toBe(false)
    expect(walSize(t.file)).toBe(0)
    expect(t.inlineRuns()).toBe(0)
  })

  it("hands a scheduled TRUNCATE of a log past the inline size to the worker", async () => {
    const t = await setup({ intervalMs: 300, passiveBytes: 8 * 1024 * 1024, inlineBytes: 128 * 1024 })
    await t.write(512 * 1024)
    await waitFor("the write-ahead log to be truncated", () => walSize(t.file) === 0, { timeoutMs: 5000, everyMs: 50 })
    expect(walSize(t.file)).toBe(0)
    expect(t.checkpointer.workerStarted()).toBe(true)
    expect(t.inlineRuns()).toBe(0)
  })
})
