/**
 * The run's temporary files in memory where the machine has a tmpfs (/dev/shm): every database,
 * spool, PostgreSQL cluster and Chromium profile the tests make goes under `os.tmpdir()`, and on
 * this machine /tmp is the ext4 disk, where each SQLite commit's fsync (the gateway syncs its WAL:
 * nothing acknowledged is lost) waits for the virtual disk. The code and its system calls are the
 * same on tmpfs (the durability tests still see every fsync); only the wait goes. Eight
 * write-heavy files, four runs each way in turn: 48 s against 56 s of wall, 11% less system time.
 *
 * Set by the global set-up before any worker starts, so the workers and every process they
 * spawn inherit TMPDIR. A TMPDIR the caller set is kept. The directory is removed at the end of
 * the run, and one left by a run that was killed is swept by the next (its pid is in its name).
 */
import { accessSync, chmodSync, constants, mkdirSync, readdirSync, rmSync, statfsSync } from "node:fs"
import { join } from "node:path"

const ROOT = "/dev/shm"
const PREFIX = "gateway-tests-"
/** Below this much free memory in the tmpfs the run stays on disk (30 MiB uploads, 16 at once). */
const MIN_FREE_BYTES = 2 * 1024 ** 3

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Points TMPDIR at a fresh directory on /dev/shm when it can; the teardown that removes it. */
export const useMemoryTmpdir = (): (() => void) | undefined => {
  if (process.env.TMPDIR !== undefined && process.env.TMPDIR !== "") return undefined
  try {
    accessSync(ROOT, constants.W_OK)
    const fs = statfsSync(ROOT)
    if (fs.bavail * fs.bsize < MIN_FREE_BYTES) return undefined
  } catch {
    return undefined
  }
  for (const name of readdirSync(ROOT)) {
    const pid = Number(name.slice(PREFIX.length))
    if (name.startsWith(PREFIX) && Number.isInteger(pid) && pid > 0 && !alive(pid)) rmSync(join(ROOT, name), { recursive: true, force: true })
  }
  const dir = join(ROOT, `${PREFIX}${process.pid}`)
  rmSync(dir, { recursive: true, force: true })
  // World-writable like /tmp: PostgreSQL's cluster belongs to an unprivileged user.
  mkdirSync(dir)
  chmodSync(dir, 0o1777)
  process.env.TMPDIR = dir
  return () => {
    delete process.env.TMPDIR
    rmSync(dir, { recursive: true, force: true })
  }
}
