/**
 * What S1 costs the garbage collector, from V8's own trace: a build's `dist/main.js` as npm start
 * runs it (its node flags, default settings) with `--trace-gc-nvp`, pinned like the bench, under
 * GET /v1/health (10 keep-alive connections, autocannon). Prints bytes allocated per request
 * (the sum of each collection's `allocated`), young collections per 10,000 requests, and their
 * average pause, survivors and promoted bytes. Unlike CPU time, none of these move with the
 * machine's load: the measure for a before/after on a shared machine.
 *
 * Usage: tsx bench/experiments/s1-gc.ts [requests=20000] <dir|tsx:file> [...]
 * (`tsx:file`: that script under tsx, e.g. tsx:bench/experiments/s1-floor.ts with S1_ENV=VARIANT=lean.)
 * S1_ENV="K=V K=V" adds settings to every server (e.g. SVC_LOG_LEVEL=none).
 */
import autocannon from "autocannon"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { SERVER_CORE } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"
import { firstBenchPort } from "../lib/ports.js"

const [nArg = "20000", ...dirs] = process.argv.slice(2)
const requests = Number(nArg)
const extraEnv = Object.fromEntries((process.env.S1_ENV ?? "").split(" ").filter((kv) => kv.includes("=")).map((kv) => {
  const i = kv.indexOf("=")
  return [kv.slice(0, i), kv.slice(i + 1)]
}))

const load = (port: number, n: number) =>
  new Promise<void>((done, fail) =>
    autocannon({ url: `http://127.0.0.1:${port}/v1/health`, connections: Number(process.env.S1_CONNECTIONS ?? 10), amount: n }, (e) => (e ? fail(e) : done()))
  )

const measure = async (dirArg: string) => {
  const script = dirArg.startsWith("tsx:") ? dirArg.slice(4) : undefined
  const dir = resolve(script === undefined ? dirArg : ".")
  const tmp = mkdtempSync(join(tmpdir(), "gateway-gc-"))
  const port = firstBenchPort()
  const child = spawn("taskset", ["-c", String(SERVER_CORE), process.execPath, ...(script === undefined
    ? [...startFlags(dir), "--trace-gc-nvp", join(dir, "dist/main.js")]
    : [...startFlags(dir), "--trace-gc-nvp", "--import", "tsx", script])], {
    env: { ...process.env, PORT: String(port), SVC_ADMIN_PORT: String(port + 1), SVC_DATABASE_URL: `file:${join(tmp, "db")}`, ...extraEnv },
    stdio: ["ignore", "pipe", "inherit"]
  })
  let out = ""
  child.stdout!.on("data", (c: Buffer) => (out += c.toString("latin1")))
  try {
    for (let i = 0;; i++) {
      const ok = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)
      if (ok) break
      if (i > 300) throw new Error(`${dir}: not healthy:\n${out.slice(-2000)}`)
      await sleep(100)
    }
    await load(port, 5_000)
    const from = out.length
    await load(port, requests)
    await sleep(200)
    const lines = out.slice(from).split("\n").filter((l) => l.includes(" gc="))
    const field = (l: string, name: string) => Number(new RegExp(` ${name}=([0-9.]+)`).exec(l)?.[1] ?? 0)
    const young = lines.filter((l) => / gc=s /.test(l))
    const avg = (name: string) => young.reduce((a, l) => a + field(l, name), 0) / Math.max(1, young.length)
    const allocated = lines.reduce((a, l) => a + field(l, "allocated"), 0)
    console.log(
      `${dirArg}: ${(allocated / requests).toFixed(0)} bytes/request; ${((young.length / requests) * 10_000).toFixed(0)} young ` +
        `collections per 10,000 (pause ${avg("pause").toFixed(1)} ms, survived ${(avg("new_space_survived") / 1024).toFixed(0)} KB, ` +
        `promoted ${(avg("promoted") / 1024).toFixed(0)} KB each), ${lines.length - young.length} others`
    )
  } finally {
    child.kill("SIGTERM")
    await new Promise((r) => child.once("exit", r))
    rmSync(tmp, { recursive: true, force: true })
  }
}

const main = async () => {
  for (const dir of dirs.length > 0 ? dirs : ["."]) await measure(dir)
}

main().then(() => process.exit(0), (e) => {
  console.error(e)
  process.exit(1)
})
