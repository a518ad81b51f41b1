/**
 * The embedded-store databases the bench's scripts load: filled by bench/servers/prepare.ts (in a
 * child process, as the servers use them) and emptied of what the write scenarios added.
 */
import { createClient } from "@libsql/client"
import { execFileSync } from "node:child_process"
import { setTimeout as sleep } from "node:timers/promises"

/** The fixture (and `document`'s bytes, if given) into the database at `url`; the document's id. */
export const prepareBenchDb = (root: string, url: string, fixture: string, document?: string): string | null => {
  const args = ["--import", "tsx", "bench/servers/prepare.ts", url, fixture, ...(document !== undefined ? [document] : [])]
  const last = execFileSync(process.execPath, args, { cwd: root, encoding: "utf8" }).trim().split("\n").at(-1) ?? "{}"
  return (JSON.parse(last) as { documentId: string | null }).documentId
}

/** Removes what S3 and S5 wrote, so every round writes into a database of the same size. */
export const cleanBenchDb = async (url: string): Promise<void> => {
  await sleep(300) // requests still in flight when the load stopped finish first
  const db = createClient({ url })
  try {
    await db.execute("PRAGMA busy_timeout = 10000")
    await db.execute("DELETE FROM document_chunks WHERE document_id IN (SELECT id FROM documents WHERE filename = 'bench.bin')")
    await db.execute("DELETE FROM documents WHERE filename = 'bench.bin'")
    await db.execute("DELETE FROM data_records")
    await db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
  } finally {
    db.close()
  }
}
