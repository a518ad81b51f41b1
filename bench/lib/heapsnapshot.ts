/**
 * Summarizes a V8 .heapsnapshot: self size by node type, by constructor / name, and the largest
 * single strings (a 3 MB inline bundle shows up here; so does a bundle's own source text).
 */
import { readFileSync } from "node:fs"

interface Snapshot {
  snapshot: { meta: { node_fields: Array<string>; node_types: [Array<string>, ...Array<unknown>] } }
  nodes: Array<number>
  strings: Array<string>
}

export interface Entry { readonly name: string; readonly bytes: number; readonly count: number }
export interface HeapSummary {
  readonly totalBytes: number
  readonly byType: ReadonlyArray<Entry>
  readonly byName: ReadonlyArray<Entry>
  readonly largestStrings: ReadonlyArray<Entry>
}

export const summarizeHeap = (file: string, top = 20): HeapSummary => {
  const snap = JSON.parse(readFileSync(file, "utf8")) as Snapshot
  const fields = snap.snapshot.meta.node_fields
  const types = snap.snapshot.meta.node_types[0]
  const width = fields.length
  const fType = fields.indexOf("type")
  const fName = fields.indexOf("name")
  const fSize = fields.indexOf("self_size")
  const byType = new Map<string, Entry>()
  const byName = new Map<string, Entry>()
  const strings: Array<Entry> = []
  const add = (map: Map<string, Entry>, name: string, bytes: number) => {
    const e = map.get(name)
    map.set(name, { name, bytes: (e?.bytes ?? 0) + bytes, count: (e?.count ?? 0) + 1 })
  }
  let total = 0
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + fType]!]!
    const name = snap.strings[snap.nodes[i + fName]!]!
    const size = snap.nodes[i + fSize]!
    total += size
    add(byType, type, size)
    if (type === "string" || type === "concatenated string" || type === "sliced string") {
      if (size > 64 * 1024) strings.push({ name: JSON.stringify(name.slice(0, 70)), bytes: size, count: 1 })
    } else {
      add(byName, `${type}: ${name.length > 60 ? `${name.slice(0, 60)}...` : name}`, size)
    }
  }
  const sorted = (m: Map<string, Entry>) => [...m.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top)
  return {
    totalBytes: total,
    byType: sorted(byType),
    byName: sorted(byName),
    largestStrings: strings.sort((a, b) => b.bytes - a.bytes).slice(0, 10)
  }
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(2)} MB`

export const formatHeap = (s: HeapSummary): string => {
  const lines = [`JS heap in snapshot: ${mb(s.totalBytes)}`, "", "by node type:"]
  for (const e of s.byType) lines.push(`  ${mb(e.bytes).padStart(10)}  ${e.name} (${e.count})`)
  lines.push("", "by constructor / name:")
  for (const e of s.byName) lines.push(`  ${mb(e.bytes).padStart(10)}  ${e.name} (${e.count})`)
  lines.push("", "largest strings:")
  for (const e of s.largestStrings) lines.push(`  ${mb(e.bytes).padStart(10)}  ${e.name}`)
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, "/bench/"))) {
  const [file] = process.argv.slice(2)
  if (file !== undefined) console.log(formatHeap(summarizeHeap(file)))
}
