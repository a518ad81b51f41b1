/**
 * Write-ahead-log checkpoints off the event loop. A checkpoint copies the log into the database
 * file and syncs it; the driver does that synchronously in the calling thread, and SQLite's
 * automatic checkpoint runs inside the COMMIT that crosses its threshold (measured: 40-65 ms of
 * blocked event loop per 8 MB commit, against 2-45 ms without it). So the gateway's own
 * connections never checkpoint (wal_autocheckpoint 0) and this worker thread, on its own
 * connection, does:
 * - PASSIVE whenever the log has grown past `passiveBytes` (checked every `pollMs`): copies what
 *   it can without waiting for or blocking anyone, so the next writer can start the log over;
 * - TRUNCATE every `intervalMs`, and before this process's next write once the log has grown
 *   past the WAL limit anyway (writes kept coming while PASSIVE ran, so no writer could start
 *   it over; see `beforeWrite`): it waits (at most `busyTimeoutMs`, in this thread) for other
 *   processes' writers and readers, copies everything and cuts the log to zero bytes.
 * journal_size_limit on every connection bounds what a restarted log keeps on disk.
 *
 * The worker is CommonJS code evaluated from a string, so it runs the same under tsx, vitest and
 * plain Node; it loads the `libsql` driver that @libsql/client itself uses.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { statSync } from "node:fs"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"

export interface CheckpointerOptions {
  /** Absolute path of the database file. */
  readonly path: string
  /** TRUNCATE every this many milliseconds; 0 = never on a schedule. */
  readonly intervalMs: number
  /** A log larger than this gets a PASSIVE checkpoint. */
  readonly passiveBytes?: number | undefined
  readonly pollMs?: number | undefined
  /** How long a TRUNCATE waits for writers and readers, in the worker. */
  readonly busyTimeoutMs?: number | undefined
}

export interface CheckpointResult {
  /** True when SQLite could not finish (someone was writing, or reading an older snapshot). */
  readonly busy: boolean
  /** Frames in the log before the checkpoint, -1 when unknown. */
  readonly logFrames: number
  readonly ms: number
}

export interface Checkpointer {
  /** Runs a checkpoint in the worker now. */
  readonly checkpoint: (mode: "PASSIVE" | "TRUNCATE") => Promise<CheckpointResult>
  /**
   * Call before a write transaction of this process begins: when the log has grown past the
   * WAL limit (writes kept coming while PASSIVE checkpoints ran, so no writer could start it
   * over), the returned promise settles once a TRUNCATE checkpoint has run. No write of this
   * process starts meanwhile, so the log ends within the limit plus one transaction. Undefined
   * (nothing to wait for) otherwise: one stat of the log file.
   */
  readonly beforeWrite: () => Promise<void> | undefined
  /** Whether the worker thread has been started (it starts on first need). */
  readonly workerStarted: () => boolean
}

const DEFAULT_PASSIVE_BYTES = 4 * 1024 * 1024

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const { statSync } = require("node:fs")
const Database = require(workerData.driver)
const db = new Database(workerData.path)
db.exec("PRAGMA busy_timeout = " + workerData.busyTimeoutMs)
db.exec("PRAGMA wal_autocheckpoint = 0")
db.exec("PRAGMA journal_size_limit = " + workerData.walLimitBytes)
// Reading first makes the connection see the file's current journal mode (it may have switched
// to WAL after this connection opened, which a checkpoint alone would not notice: a no-op).
const touch = db.prepare("SELECT count(*) FROM sqlite_master")
const run = (mode) => {
  const started = Date.now()
  try {
    touch.raw(true).get()
    const row = db.prepare("PRAGMA wal_checkpoint(" + mode + ")").raw(true).get() || []
    return { ok: true, busy: Number(row[0] || 0) !== 0, logFrames: Number(row[1] == null ? -1 : row[1]), ms: Date.now() - started }
  } catch (e) {
    const busy = /^SQLITE_(BUSY|LOCKED)/.test(String(e && e.code))
    return busy ? { ok: true, busy: true, logFrames: -1, ms: Date.now() - started } : { ok: false, message: String(e && e.message) }
  }
}
const walStat = () => { try { return statSync(workerData.path + "-wal") } catch { return undefined } }
const timers = []
let checked = ""
if (workerData.pollMs > 0) {
  timers.push(setInterval(() => {
    const st = walStat()
    if (st === undefined || st.size <= workerData.passiveBytes) return
    // Only when the log was written since the last look (a restarted log keeps its size).
    const seen = st.size + ":" + st.mtimeMs
    if (seen === checked) return
    checked = seen
    run("PASSIVE")
  }, workerData.pollMs))
}
if (workerData.intervalMs > 0) timers.push(setInterval(() => run("TRUNCATE"), workerData.intervalMs))
parentPort.on("message", (m) => {
  if (m.type === "close") {
    timers.forEach(clearInterval)
    try { db.close() } catch {}
    parentPort.postMessage({ id: m.id, ok: true })
    parentPort.close()
    return
  }
  parentPort.postMessage({ id: m.id, ...run(m.mode) })
})
`

const driverPath = () => createRequire(createRequire(import.meta.url).resolve("@libsql/client")).resolve("libsql")

/** A scheduled TRUNCATE of a log this small runs on the caller's connection (no worker needed). */
const DEFAULT_INLINE_BYTES = 1024 * 1024

/** How often the log's size is looked at while no worker runs (one stat). */
const WATCH_MS = 1000

export interface LazyCheckpointerOptions extends CheckpointerOptions {
  readonly walLimitBytes: number
  /** Scheduled TRUNCATEs of a log up to this size run here, through `inline`, instead of in a worker. */
  readonly inlineBytes?: number | undefined
  /** A TRUNCATE checkpoint on one of the caller's connections (busy_timeout 0: it waits for nobody). */
  readonly inline: () => Promise<void>
  /** Called once if the worker cannot start: the caller turns SQLite's own checkpoints back on. */
  readonly unavailable: (reason: string) => void
}

/**
 * The checkpointer for the scope. Its worker thread (about 18 MB of RSS: an isolate and a
 * second copy of the driver, measured with process.memoryUsage) starts only when a log needs
 * it: once the log grows past `passiveBytes`, or when a scheduled TRUNCATE finds more than
 * `inlineBytes` in it (a smaller one is copied inline: measured about 5-8 ms per MiB of blocked
 * event loop, once per interval at most). Until then one stat per second watches the log, so an
 * idle or read-mostly process never pays for the worker. Closing the scope closes the worker's
 * connection and ends it.
 */
export const startCheckpointer = (
  options: LazyCheckpointerOptions
): Effect.Effect<Checkpointer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const pending = new Map<number, (reply: { ok: boolean; busy?: boolean; logFrames?: number; ms?: number; message?: string }) => void>()
    let nextId = 0
    let started: Promise<Worker> | undefined
    let failed = false
    const passiveBytes = options.passiveBytes ?? DEFAULT_PASSIVE_BYTES
    const wal = `${options.path}-wal`
    const walSize = () => {
      try {
        return statSync(wal).size
      } catch {
        return 0
      }
    }

    const spawn = () =>
      new Promise<Worker>((resolve, reject) => {
        const w = new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: {
            driver: driverPath(),
            path: options.path,
            intervalMs: Math.max(0, options.intervalMs),
            passiveBytes,
            pollMs: options.pollMs ?? 50,
            busyTimeoutMs: options.busyTimeoutMs ?? 1000,
            walLimitBytes: options.walLimitBytes
          },
          // The worker needs none of the parent's loaders (tsx, test runners).
          execArgv: [],
          stdout: false,
          stderr: false
        })
        w.unref()
        w.on("message", (m: { id: number }) => {
          const reply = pending.get(m.id)
          pending.delete(m.id)
          reply?.(m as never)
        })
        const fail = (e: unknown) => {
          for (const reply of pending.values()) reply({ ok: false, message: String((e as Error)?.message ?? e) })
          pending.clear()
        }
        w.on("error", fail)
        w.on("exit", () => fail(new Error("checkpoint worker exited")))
        // Online once it has loaded the driver and opened the database: a checkpoint answers.
        const id = nextId++
        const timer = setTimeout(() => reject(new Error("checkpoint worker did not start in time")), 10_000)
        pending.set(id, (reply) => {
          clearTimeout(timer)
          if (reply.ok) resolve(w)
          else reject(new Error(`checkpoint worker did not start: ${reply.message}`))
        })
        w.postMessage({ id, mode: "PASSIVE" })
      })

    /** The worker, started on first use; rejects (once and for good) if it cannot start. */
    const worker = (): Promise<Worker> => {
      if (started === undefined) {
        clearInterval(watch)
        started = spawn()
        started.catch((e: Error) => {
          failed = true
          options.unavailable(e.message)
        })
      }
      return started
    }

    const checkpoint = (mode: "PASSIVE" | "TRUNCATE") =>
      worker().then((w) =>
        new Promise<CheckpointResult>((resolve, reject) => {
          const id = nextId++
          pending.set(id, (reply) =>
            reply.ok
              ? resolve({ busy: reply.busy === true, logFrames: reply.logFrames ?? -1, ms: reply.ms ?? 0 })
              : reject(new Error(reply.message ?? "checkpoint failed")))
          w.postMessage({ id, mode })
        })
      )

    // Until the worker runs: the log is watched here; it takes over both jobs once started.
    const inlineBytes = options.inlineBytes ?? DEFAULT_INLINE_BYTES
    let dirtySince: number | undefined
    let inlineRunning = false
    const watch = setInterval(() => {
      const size = walSize()
      if (size === 0) return void (dirtySince = undefined)
      if (size > passiveBytes) return void checkpoint("PASSIVE").catch(() => {})
      const now = Date.now()
      dirtySince ??= now
      if (options.intervalMs <= 0 || now - dirtySince < options.intervalMs || inlineRunning) return
      dirtySince = undefined
      if (size > inlineBytes) return void checkpoint("TRUNCATE").catch(() => {})
      inlineRunning = true
      options.inline().finally(() => (inlineRunning = false))
    }, Math.min(WATCH_MS, options.intervalMs > 0 ? options.intervalMs : WATCH_MS))
    watch.unref()

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        clearInterval(watch)
        if (started === undefined || failed) return Effect.void
        return Effect.promise(() => started!.then((w) => w, () => undefined)).pipe(
          Effect.flatMap((w) =>
            w === undefined ? Effect.void : Effect.callback<void>((resume) => {
              let resumed = false
              const done = () => {
                if (resumed) return
                resumed = true
                resume(Effect.promise(() => w.terminate().then(() => undefined, () => undefined)))
              }
              pending.set(nextId, done)
              w.once("exit", done)
              w.postMessage({ id: nextId++, type: "close" })
            })
          ),
          Effect.timeout("5 seconds"),
          Effect.ignore
        )
      })
    )

    const limit = Math.max(options.walLimitBytes, passiveBytes)
    let truncating: Promise<void> | undefined
    const beforeWrite = (): Promise<void> | undefined => {
      if (truncating !== undefined) return truncating
      if (failed || walSize() <= limit) return undefined
      truncating = checkpoint("TRUNCATE").then(() => undefined, () => undefined).finally(() => (truncating = undefined))
      return truncating
    }
    return { checkpoint, beforeWrite, workerStarted: () => started !== undefined }
  })
