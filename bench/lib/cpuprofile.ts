/**
 * Summarizes a V8 .cpuprofile (node --cpu-prof): self time by function and by package, and
 * inclusive time of chosen functions (e.g. writev), as shares of the non-idle time.
 */
import { readFileSync } from "node:fs"

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: Array<number> }
interface Profile { nodes: Array<ProfileNode>; samples: Array<number>; timeDeltas: Array<number> }

export interface Share { readonly name: string; readonly ms: number; readonly share: number }
export interface ProfileSummary {
  readonly totalMs: number
  readonly activeMs: number
  readonly byFunction: ReadonlyArray<Share>
  readonly byPackage: ReadonlyArray<Share>
  readonly inclusive: ReadonlyArray<Share>
}

/** `effect <module>`, `@effect/platform-node <module>`, `node:http`, `bench`, `src`, or a pseudo-frame like `(garbage collector)`. */
export const packageOf = (frame: CallFrame): string => {
  const url = frame.url
  if (url === "") return frame.functionName.startsWith("(") ? frame.functionName : "(native)"
  if (url.startsWith("node:")) return url.replace(/^node:internal\//, "node:").split("/").slice(0, 2).join("/")
  const nm = url.lastIndexOf("/node_modules/")
  if (nm >= 0) {
    const rest = url.slice(nm + "/node_modules/".length).split("/")
    const name = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!
    if (name === "effect" || name === "@effect/platform-node" || name === "@effect/platform-node-shared") {
      // effect/dist/internal/effect.js -> effect internal/effect
      const inDist = rest.indexOf("dist")
      return `${name} ${rest.slice(inDist + 1).join("/").replace(/\.js$/, "")}`
    }
    return name
  }
  const m = /\/work\/[^/]+\/(src|bench|test)\/(.*)$/.exec(url)
  return m !== null ? `${m[1]}/${m[2]}` : url
}

/** `lastMs`: only the samples of the profile's last `lastMs` milliseconds (the load, not the start-up). */
export const summarize = (file: string, inclusiveOf: ReadonlyArray<string> = [], top = 25, lastMs = Infinity): ProfileSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const self = new Map<number, number>()
  const allUs = profile.timeDeltas.reduce((a, b) => a + b, 0)
  const fromUs = allUs - lastMs * 1000
  let totalUs = 0
  let atUs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i] ?? 0
    atUs += dt
    if (atUs < fromUs) continue
    totalUs += dt
    self.set(profile.samples[i]!, (self.get(profile.samples[i]!) ?? 0) + dt)
  }
  const idleUs = [...self].filter(([id]) => byId.get(id)!.callFrame.functionName === "(idle)").reduce((a, [, us]) => a + us, 0)
  const activeUs = totalUs - idleUs

  const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us)
  const fns = new Map<string, number>()
  const pkgs = new Map<string, number>()
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame
    if (f.functionName === "(idle)") continue
    add(fns, `${f.functionName || "(anonymous)"} ${packageOf(f)}:${f.lineNumber + 1}`, us)
    add(pkgs, packageOf(f), us)
  }

  // Inclusive time: a sample counts once for a function if the function is anywhere on its stack.
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const incl = new Map<string, number>()
  for (const [id, us] of self) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const name = byId.get(cur)!.callFrame.functionName
      if (inclusiveOf.includes(name) && !seen.has(name)) {
        seen.add(name)
        add(incl, name, us)
      }
    }
  }

  const shares = (map: Map<string, number>, n: number): Array<Share> =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, ms: us / 1000, share: us / activeUs }))
  return {
    totalMs: totalUs / 1000,
    activeMs: activeUs / 1000,
    byFunction: shares(fns, top),
    byPackage: shares(pkgs, top),
    inclusive: shares(incl, inclusiveOf.length)
  }
}

export const formatSummary = (s: ProfileSummary): string => {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`.padStart(6)
  const lines = [`active ${s.activeMs.toFixed(0)} ms of ${s.totalMs.toFixed(0)} ms`, "", "self time by package:"]
  for (const p of s.byPackage) lines.push(`  ${pct(p.share)}  ${p.name}`)
  lines.push("", "self time by function:")
  for (const f of s.byFunction) lines.push(`  ${pct(f.share)}  ${f.name}`)
  if (s.inclusive.length > 0) {
    lines.push("", "inclusive time:")
    for (const f of s.inclusive) lines.push(`  ${pct(f.share)}  ${f.name}`)
  }
  return lines.join("\n")
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, "/bench/"))) {
  const [file, last, ...names] = process.argv.slice(2)
  if (file !== undefined) {
    console.log(formatSummary(summarize(file, names.length > 0 ? names : ["writev", "runLoop", "handler"], 30, Number(last ?? Infinity))))
  }
}
