/**
 * Memory per tenant cell: N gateways started as `npm start` starts one (dist/main.js with its
 * node flags, default settings, each on its own SQLite file and ports), idle, against N bare
 * `node:http` servers on the same Node. Cells share a host, so what one costs is its private
 * memory (pages no other process maps) and its proportional set (shared pages split among the
 * processes mapping them), read from /proc/<pid>/smaps_rollup; RSS counts shared pages in full.
 * Private memory is then split by mapping (/proc/<pid>/smaps): the V8 heap and other anonymous
 * mappings, malloc's [heap], the node binary's and native modules' written pages.
 *
 *   npx tsx bench/experiments/cells.ts [cells=10]
 *   CELL_FLAGS="--optimize-for-size" ...   node flags added to the gateway's (trials)
 *   CELL_KIND=gateway ...                   skip the bare servers
 *   CELL_DIST=/tmp/before/dist ...          another build of the gateway (A/B of a change)
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const NODE = join(ROOT, "node_modules/.bin/node")
const CELLS = Number(process.argv[2] ?? 10)
const SETTLE_MS = 5000
const DIST = process.env.CELL_DIST ?? "dist"

const BARE = `require("node:http").createServer((q, s) => s.end("ok")).listen(Number(process.env.PORT), "127.0.0.1")`

interface Started {
  readonly child: ChildProcess
  readonly url: string
  readonly healthPath: string
}

const start = async (kind: "gateway" | "bare", dir: string): Promise<Started> => {
  const port = await freePort()
  const env = { ...process.env, PORT: String(port), HOST: "127.0.0.1" }
  const child = kind === "gateway"
    ? spawn(NODE, [...startFlags(ROOT), ...(process.env.CELL_FLAGS ?? "").split(" ").filter(Boolean), join(DIST, "main.js")], {
      cwd: ROOT,
      // Default settings but the database (one per cell) and the admin port (one per cell).
      env: { ...env, SVC_DATABASE_URL: `file:${join(dir, `cell-${port}.db`)}`, SVC_ADMIN_PORT: String(await freePort()) },
      stdio: "ignore"
    })
    : spawn(NODE, ["-e", BARE], { env, stdio: "ignore" })
  const url = `http://127.0.0.1:${port}`
  const healthPath = kind === "gateway" ? "/v1/health" : "/"
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    try {
      if ((await fetch(url + healthPath)).ok) return { child, url, healthPath }
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`${kind} did not start`)
}

const KB = (text: string, field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? 0)

interface Memory {
  readonly rss: number
  readonly pss: number
  readonly privateKb: number
  readonly byMapping: Map<string, number>
}

/** Private kB per kind of mapping, from /proc/<pid>/smaps. */
const privateByMapping = (pid: number) => {
  const out = new Map<string, number>()
  let name = "?"
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (header !== null) {
      const path = header[1]!.trim()
      name = path === "" ? "anonymous (V8 heap, code space, buffers)"
        : path.startsWith("[") ? path
        : /\/node$/.test(path) ? "node binary"
        : /\.node$/.test(path) ? `native module ${path.split("/").slice(-3).join("/")}`
        : `file ${path.split("/").pop()}`
      continue
    }
    const m = /^Private_(?:Clean|Dirty):\s+(\d+) kB/.exec(line)
    if (m !== null) out.set(name, (out.get(name) ?? 0) + Number(m[1]))
  }
  return out
}

const memoryOf = (pid: number): Memory => {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8")
  return {
    rss: KB(rollup, "Rss"),
    pss: KB(rollup, "Pss"),
    privateKb: KB(rollup, "Private_Clean") + KB(rollup, "Private_Dirty"),
    byMapping: privateByMapping(pid)
  }
}

const mb = (kb: number) => (kb / 1024).toFixed(1)
const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length

const measure = async (kind: "gateway" | "bare") => {
  const dir = mkdtempSync(join(tmpdir(), `cells-${kind}-`))
  const cells: Array<Started> = []
  try {
    // One after another, as cells are deployed: each start has the cores to itself.
    for (let i = 0; i < CELLS; i++) cells.push(await start(kind, dir))
    // One request each, as a probe would send, then idle.
    await Promise.all(cells.map((c) => fetch(c.url + c.healthPath).then((r) => r.text())))
    await new Promise((r) => setTimeout(r, SETTLE_MS))
    const memories = cells.map((c) => memoryOf(c.child.pid!))
    const mappings = new Map<string, number>()
    for (const m of memories) for (const [k, v] of m.byMapping) mappings.set(k, (mappings.get(k) ?? 0) + v / memories.length)
    return {
      rss: mean(memories.map((m) => m.rss)),
      pss: mean(memories.map((m) => m.pss)),
      privateKb: mean(memories.map((m) => m.privateKb)),
      mappings
    }
  } finally {
    for (const c of cells) c.child.kill("SIGKILL")
    rmSync(dir, { recursive: true, force: true })
  }
}

const bare = process.env.CELL_KIND === "gateway"
  ? { rss: 0, pss: 0, privateKb: 0, mappings: new Map<string, number>() }
  : await measure("bare")
const gateway = await measure("gateway")
console.log(`${CELLS} idle cells each, mean per process (MB):`)
console.log(`| process | RSS | PSS (proportional) | private |`)
console.log(`|---|---|---|---|`)
console.log(`| bare node:http | ${mb(bare.rss)} | ${mb(bare.pss)} | ${mb(bare.privateKb)} |`)
console.log(`| gateway (npm start) | ${mb(gateway.rss)} | ${mb(gateway.pss)} | ${mb(gateway.privateKb)} |`)
console.log(`| difference | +${mb(gateway.rss - bare.rss)} | +${mb(gateway.pss - bare.pss)} | +${mb(gateway.privateKb - bare.privateKb)} |`)
console.log(`\nPrivate memory by mapping, mean per process (MB): gateway / bare / difference`)
const names = new Set([...gateway.mappings.keys(), ...bare.mappings.keys()])
const rows = [...names].map((n) => [n, gateway.mappings.get(n) ?? 0, bare.mappings.get(n) ?? 0] as const)
  .sort((a, b) => (b[1] - b[2]) - (a[1] - a[2]))
for (const [name, g, b] of rows) if (g >= 102 || b >= 102) console.log(`- ${name}: ${mb(g)} / ${mb(b)} / ${g >= b ? "+" : ""}${mb(g - b)}`)
