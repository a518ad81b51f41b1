/**
 * S4's read path: ways of reading a 256 MiB document's chunks out of SQLite, each timed over
 * the whole document in one process (no HTTP), with the external memory they leave behind.
 *
 * Usage: tsx bench/experiments/s4-read.ts <file: url of a prepared database> <documentId> [rounds=3]
 */
import { createClient } from "@libsql/client"
import Database from "libsql"

const [url, documentId, roundsArg = "3"] = process.argv.slice(2)
if (url === undefined || documentId === undefined) throw new Error("usage: s4-read.ts <file: url> <documentId> [rounds]")
const path = url.replace(/^file:/, "")
const rounds = Number(roundsArg)
const SELECT_ONE = "SELECT data FROM document_chunks WHERE document_id = ? AND idx = ?"
const SELECT_ALL = "SELECT data FROM document_chunks WHERE document_id = ? ORDER BY idx"

const variants: Record<string, () => Promise<number>> = {
  "@libsql/client, one query per chunk (current)": async () => {
    const client = createClient({ url })
    let bytes = 0
    for (let idx = 0;; idx++) {
      const rs = await client.execute({ sql: SELECT_ONE, args: [documentId, idx] })
      const row = rs.rows[0]
      if (row === undefined) break
      bytes += (row.data as ArrayBuffer).byteLength
    }
    client.close()
    return bytes
  },
  "libsql, prepared once, get per chunk": async () => {
    const db = new Database(path, { readonly: true })
    const stmt = db.prepare(SELECT_ONE).raw()
    let bytes = 0
    for (let idx = 0;; idx++) {
      const data = (stmt.get(documentId, idx) as [Buffer] | undefined)?.[0]
      if (data === undefined) break
      bytes += data.byteLength
      if (idx % 4 === 3) await new Promise((r) => setImmediate(r))
    }
    db.close()
    return bytes
  },
  "libsql, prepared once, get per chunk, mmap 1 GiB": async () => {
    const db = new Database(path, { readonly: true })
    db.exec("PRAGMA mmap_size = 1073741824")
    const stmt = db.prepare(SELECT_ONE).raw()
    let bytes = 0
    for (let idx = 0;; idx++) {
      const data = (stmt.get(documentId, idx) as [Buffer] | undefined)?.[0]
      if (data === undefined) break
      bytes += data.byteLength
      if (idx % 4 === 3) await new Promise((r) => setImmediate(r))
    }
    db.close()
    return bytes
  },
  "libsql, one statement iterated": async () => {
    const db = new Database(path, { readonly: true })
    let bytes = 0
    let i = 0
    // libsql fetches 100 rows per step of the iterator: 25 MiB of chunks held at once.
    for (const [data] of db.prepare(SELECT_ALL).raw().iterate(documentId) as Iterable<[Buffer]>) {
      bytes += data.byteLength
      if (++i % 4 === 0) await new Promise((r) => setImmediate(r))
    }
    db.close()
    return bytes
  },
  "libsql, one statement iterated, mmap 1 GiB": async () => {
    const db = new Database(path, { readonly: true })
    db.exec("PRAGMA mmap_size = 1073741824")
    let bytes = 0
    let i = 0
    // libsql fetches 100 rows per step of the iterator: 25 MiB of chunks held at once.
    for (const [data] of db.prepare(SELECT_ALL).raw().iterate(documentId) as Iterable<[Buffer]>) {
      bytes += data.byteLength
      if (++i % 4 === 0) await new Promise((r) => setImmediate(r))
    }
    db.close()
    return bytes
  }
}

const main = async () => {
  const times = new Map<string, Array<number>>(Object.keys(variants).map((k) => [k, []]))
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(variants)) {
      const t0 = performance.now()
      const cpu0 = process.cpuUsage()
      const bytes = await run()
      const cpu = process.cpuUsage(cpu0)
      if (bytes !== 256 * 1024 * 1024) throw new Error(`${name}: read ${bytes} bytes`)
      times.get(name)!.push((cpu.user + cpu.system) / 1000)
      void t0
    }
  }
  for (const [name, ts] of times) {
    const sorted = [...ts].sort((a, b) => a - b)
    console.log(`${name.padEnd(52)} CPU ms per 256 MiB: median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} (${ts.map((t) => t.toFixed(0)).join(", ")})`)
  }
}

main().catch((e) => {
  console.error(e)
  process.exitCode = 1
})
