/**
 * Commit durability off the event loop. With SQLite's default `synchronous=FULL`, every COMMIT
 * fsyncs the write-ahead log inside the driver call, on the event loop's thread (measured during
 * 16 concurrent 30 MiB raw uploads: 23-28 such fsyncs, up to 62 ms each, while the disk was busy
 * with the uploads' own files). The gateway's connections run `synchronous=NORMAL` instead, where
 * a WAL-mode COMMIT only writes the log, and this module makes what they committed durable with
 * an `fdatasync` of the log through libuv's thread pool before anything leaves the store:
 *
 * - `committed()` after every statement that may have written (a COMMIT, an autocommit write);
 * - `durable()` before a result is handed on: settles once everything committed until then is on
 *   disk. Syncs are shared (group commit): one runs at a time, and the commits that finished
 *   while it ran wait for the next one, which covers them all.
 *
 * So nothing is acknowledged before it is on disk, as with FULL; a crash between a COMMIT and its
 * sync loses only what nobody was told about. A failed sync fails its waiters and every result
 * after it (503 until a restart): unlike FULL, whose failed sync also undoes the COMMIT, the
 * commit is in the log by then, so a write answered 503 this way may be there after the restart
 * (a retry with its Idempotency-Key finds it). SQLite's checkpoints still sync the log and the
 * database themselves (NORMAL does so in WAL mode; they run in the checkpoint worker or at exit),
 * so frames a checkpoint copied, or a TRUNCATE removed, are durable in the database file.
 *
 * The log is the same file for the life of the database's connections (restarting and truncating
 * it keep its inode; SQLite deletes it only when the last connection closes), but each sync
 * checks the path's inode and reopens a replaced log. A log file not synced before has its
 * directory synced too, so the file itself survives a power failure (SQLite's FULL does the same
 * on its first sync of a new journal).
 */
import { type FileHandle, open, stat } from "node:fs/promises"
import { dirname } from "node:path"

export interface WalSync {
  /** Notes a statement that may have committed something (not yet on disk). */
  readonly committed: () => void
  /**
   * Settles once everything committed before this call is on disk; undefined when it already is
   * (nothing to wait for). Rejects when the sync failed, and from then on for good: the caller
   * must not acknowledge (the store answers 503 until the process restarts and SQLite recovers
   * what the disk holds).
   */
  readonly durable: () => Promise<void> | undefined
  /** Closes the kept file handle (after the connections' last checkpoint). */
  readonly close: () => Promise<void>
}

/** One durable point: everything written to the file at `path` before the call is on disk. */
export type SyncFile = (path: string) => Promise<void>

interface Waiter {
  readonly upTo: number
  readonly resolve: () => void
  readonly reject: (e: unknown) => void
}

/** `fdatasync` of the log at `walPath` on a handle kept open, its directory synced once per file. */
const fileSyncer = (walPath: string) => {
  let handle: FileHandle | undefined
  let inode = -1
  let dirSyncedInode = -1
  const release = async () => {
    const h = handle
    handle = undefined
    inode = -1
    await h?.close().catch(() => {})
  }
  const syncDir = async () => {
    const dir = await open(dirname(walPath), "r")
    try {
      await dir.sync()
    } finally {
      await dir.close()
    }
  }
  const sync: SyncFile = async () => {
    const current = await stat(walPath).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e)))
    // No log: the last connection closed after a full checkpoint, which synced the database.
    if (current === undefined) return release()
    if (handle === undefined || current.ino !== inode) {
      await release()
      handle = await open(walPath, "r")
      inode = (await handle.stat()).ino
    }
    await handle.datasync()
    if (dirSyncedInode !== inode) {
      await syncDir()
      dirSyncedInode = inode
    }
  }
  return { sync, close: release }
}

/**
 * The durability of the database at `databasePath` (its log is `<path>-wal`). `syncFile`
 * replaces the file system's sync (tests hold a sync back to see that answers wait for it).
 */
export const makeWalSync = (databasePath: string, syncFile?: SyncFile): WalSync => {
  const walPath = `${databasePath}-wal`
  const syncer = syncFile === undefined ? fileSyncer(walPath) : { sync: syncFile, close: async () => {} }
  let commits = 0
  let synced = 0
  let running: Promise<void> | undefined
  /**
   * The first failed sync. After it nothing is acknowledged any more: Linux may have dropped the
   * dirty pages that failed, so a later sync can succeed with an earlier commit lost, and the
   * log's recovery stops at the first missing frame, losing every commit after it too.
   */
  let broken: { readonly error: unknown } | undefined
  const waiting: Array<Waiter> = []

  const round = () => {
    // Everything committed by now: the sync starts after these commits wrote the log.
    const upTo = commits
    running = syncer.sync(walPath).then(
      () => {
        synced = Math.max(synced, upTo)
        settle(upTo, undefined)
      },
      (e: unknown) => {
        broken ??= { error: e }
        settle(Number.POSITIVE_INFINITY, e)
      }
    ).finally(() => {
      running = undefined
      if (waiting.length > 0) round()
    })
  }

  const settle = (upTo: number, error: unknown) => {
    let kept = 0
    for (const w of waiting) {
      if (w.upTo > upTo) waiting[kept++] = w
      else if (error === undefined) w.resolve()
      else w.reject(error)
    }
    waiting.length = kept
  }

  return {
    committed: () => {
      commits++
    },
    durable: () => {
      if (broken !== undefined) return Promise.reject(broken.error)
      const upTo = commits
      if (synced >= upTo) return undefined
      return new Promise<void>((resolve, reject) => {
        waiting.push({ upTo, resolve, reject })
        if (running === undefined) round()
      })
    },
    // After the running sync (its handle is not closed under it).
    close: async () => {
      while (running !== undefined) await running
      await syncer.close()
    }
  }
}
