/**
 * Attributes a CPU profile of the built gateway (`node --cpu-prof dist/main.js`, e.g. from
 * `tsx bench/profile.ts S1 8`) to what the code is for: every frame is mapped through the
 * bundle's source maps to its original file; a sample counts for the innermost frame of ours
 * (src/...) on its stack (so JSON.stringify called by the request log counts as the request log),
 * else for the module of its leaf frame (Effect's fiber runtime, the router, node:http, GC...).
 *
 * Usage: tsx bench/experiments/s1-attribute.ts <file.cpuprofile> [lastMs=8000] [cpuUsPerRequest]
 * With cpuUsPerRequest (measured from /proc under the same load), shares are also given in us.
 */
import { originalPositionFor, TraceMap } from "@jridgewell/trace-mapping"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: Array<number> }
interface Profile { nodes: Array<ProfileNode>; samples: Array<number>; timeDeltas: Array<number> }

const [file, lastArg = "8000", cpuArg] = process.argv.slice(2)
if (file === undefined) throw new Error("usage: s1-attribute.ts <file.cpuprofile> [lastMs] [cpuUsPerRequest]")
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
const maps = new Map<string, TraceMap | null>()
const mapOf = (url: string): TraceMap | null => {
  if (!maps.has(url)) {
    const path = url.startsWith("file://") ? fileURLToPath(url) : url
    maps.set(url, existsSync(`${path}.map`) ? new TraceMap(readFileSync(`${path}.map`, "utf8")) : null)
  }
  return maps.get(url)!
}

/** The original source of a frame: `src/...`, `effect/<module>`, `node:<module>`, or a pseudo-frame. */
const sourceOf = (frame: CallFrame): string => {
  if (frame.url === "") return frame.functionName.startsWith("(") ? frame.functionName : `native ${frame.functionName}`
  if (frame.url.startsWith("node:")) return frame.url
  const map = mapOf(frame.url)
  if (map === null) return frame.url
  const pos = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber })
  const source = pos.source ?? frame.url
  const nm = source.lastIndexOf("node_modules/")
  if (nm >= 0) return source.slice(nm + "node_modules/".length).replace(/\/(src|dist\/esm|dist)\//, "/")
  const src = source.indexOf("src/")
  return src >= 0 ? source.slice(src) : source
}

/** The leaf's module, in words (when no frame of ours is on the stack). */
const kindOf = (source: string, fn: string): string => {
  if (source === "(garbage collector)") return "GC"
  if (source === "(program)") return "(program: V8/native outside JS)"
  if (fn === "writev" || source.includes("stream_base_commons")) return "node: socket write (writev)"
  if (source.startsWith("node:_http_server") || source.startsWith("node:_http_common") || source.startsWith("node:_http_incoming")) return "node:http server/parser"
  if (source.startsWith("node:_http_outgoing")) return "node:http response writing"
  if (source.startsWith("node:")) return `node: ${source.slice(5).split("/").slice(0, 2).join("/")}`
  if (source.startsWith("native ")) return `native ${fn}`
  if (source.startsWith("@effect/platform-node")) return "platform-node (request/response objects)"
  if (source.startsWith("effect/http/HttpRouter") || source.startsWith("find-my-way")) return "effect router"
  if (source.startsWith("effect/http-api")) return "effect HttpApi"
  if (source.startsWith("effect/http/")) return `effect ${source.slice(7)}`
  if (source.startsWith("effect/internal/effect") || source.startsWith("effect/internal/core")) return "effect fiber runtime"
  if (source.startsWith("effect/")) return `effect ${source.slice(7)}`
  return source
}

const byId = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
const sources = new Map<number, string>()
const src = (id: number) => {
  let s = sources.get(id)
  if (s === undefined) sources.set(id, s = sourceOf(byId.get(id)!.callFrame))
  return s
}

const DISPATCH = new Set(["proceed", "", "(anonymous)", "admitDeclaredBody"])

const categoryCache = new Map<number, string>()
const categoryOf = (leaf: number): string => {
  const cached = categoryCache.get(leaf)
  if (cached !== undefined) return cached
  let category: string | undefined
  for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
    const s = src(id)
    // The server's dispatch runs the whole request synchronously (Effect's fiber included):
    // what runs below it counts for its own module, only its own frames for it.
    if (s === "src/http/server/nodeServer.ts" && DISPATCH.has(byId.get(id)!.callFrame.functionName) && id !== leaf) break
    if (s.startsWith("src/")) {
      category = `${s} (${byId.get(id)!.callFrame.functionName || "anonymous"})`
      break
    }
  }
  category ??= kindOf(src(leaf), byId.get(leaf)!.callFrame.functionName)
  categoryCache.set(leaf, category)
  return category
}

let t = 0
const times: Array<number> = []
for (const d of profile.timeDeltas) times.push(t += d)
const end = t
const from = end - Number(lastArg) * 1000
const totals = new Map<string, number>()
let active = 0
for (let i = 0; i < profile.samples.length; i++) {
  if (times[i]! < from) continue
  const dt = profile.timeDeltas[i + 1] ?? 0
  const leaf = profile.samples[i]!
  if (src(leaf) === "(idle)") continue
  const c = categoryOf(leaf)
  totals.set(c, (totals.get(c) ?? 0) + dt)
  active += dt
}
const cpu = cpuArg === undefined ? undefined : Number(cpuArg)
console.log(`active ${(active / 1000).toFixed(0)} ms of the last ${lastArg} ms`)
for (const [c, us] of [...totals].sort((a, b) => b[1] - a[1])) {
  const share = us / active
  if (share < 0.002) continue
  console.log(`${(share * 100).toFixed(1).padStart(5)}%${cpu === undefined ? "" : ` ${(share * cpu).toFixed(1).padStart(6)} us`}  ${c}`)
}
