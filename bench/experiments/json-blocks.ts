/**
 * What holds the event loop while the gateway takes JSON (base64) uploads, per build: each build
 * (a repository root with its dist/, e.g. a `git archive` of main built there, and this worktree)
 * is started as `npm start` starts it, with a preload (./longCallbacks.cjs) that records every
 * synchronous callback over 20 ms of main-thread CPU. N uploads of 30 MiB go one after another
 * while GET /v1/health runs every 20 ms, each on its own connection; printed per run: the server's
 * CPU, health latency, the main-thread CPU a health probe waited through (what the work ahead of
 * it cost, independent of how long other processes held the cores), and the longest callbacks.
 * The builds take turns, A B A B.
 *
 * Usage: tsx bench/experiments/json-blocks.ts <root A> <root B> [--uploads N] [--rounds N]
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { freePort } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"

const args = process.argv.slice(2)
const option = (name: string, fallback: number) => {
  const i = args.indexOf(name)
  if (i === -1) return fallback
  const v = Number(args[i + 1])
  args.splice(i, 2)
  return v
}
const uploads = option("--uploads", 4)
const rounds = option("--rounds", 2)
const roots = args
const PRELOAD = fileURLToPath(new URL("./longCallbacks.cjs", import.meta.url))

const call = (url: string, method: string, body?: Buffer) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const headers = body === undefined ? {} : { "content-type": "application/json", "content-length": body.length }
    const req = request(url, { method, agent: false, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }))
    })
    req.on("error", reject)
    req.end(body)
  })

const ticks = (path: string) => {
  const stat = readFileSync(path, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) * 10
}

let child: ChildProcess | undefined
process.on("exit", () => child?.kill())

const run = async (root: string, label: string) => {
  const dir = mkdtempSync(join(tmpdir(), "json-blocks-"))
  const port = await freePort()
  const lagOut = join(dir, "callbacks.txt")
  child = spawn(join(root, "node_modules/.bin/node"), [...startFlags(root), "-r", PRELOAD, join(root, "dist/main.js")], {
    cwd: root,
    env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${join(dir, "w.db")}`, SVC_MAX_BODY_BYTES: String(64 * 1024 * 1024), LAG_OUT: lagOut },
    stdio: "ignore"
  })
  const pid = child.pid!
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 300; i++) {
    if (await call(`${url}/v1/health`, "GET").then((r) => r.status === 200, () => false)) break
    await new Promise((r) => setTimeout(r, 100))
  }
  const task = JSON.parse((await call(`${url}/v1/entities/8efaebe3-f600-4ec5-a77b-afb37a9b252d/tasks`, "POST", Buffer.from(JSON.stringify({ workflowId: "bank-reconciliation", context: { accountId: "1000" } })))).text).id
  const bodies = Array.from({ length: uploads }, () => Buffer.from(JSON.stringify({ source: "s", fileName: "a.pdf", data: randomBytes(30 * 1024 * 1024).toString("base64") })))
  const cpu0 = ticks(`/proc/${pid}/stat`)
  let done = false
  const latency: Array<number> = []
  const waited: Array<number> = []
  const probes = (async () => {
    while (!done) {
      await new Promise((r) => setTimeout(r, 20))
      const c = ticks(`/proc/${pid}/task/${pid}/stat`)
      const t = performance.now()
      await call(`${url}/v1/health`, "GET")
      latency.push(performance.now() - t)
      waited.push(ticks(`/proc/${pid}/task/${pid}/stat`) - c)
    }
  })()
  for (const body of bodies) {
    const r = await call(`${url}/v1/tasks/${task}/files`, "POST", body)
    if (r.status !== 201) console.log(`  upload ${r.status} ${r.text.slice(0, 200)}`)
  }
  done = true
  await probes
  const cpu = (ticks(`/proc/${pid}/stat`) - cpu0) / 1000
  latency.sort((a, b) => a - b)
  waited.sort((a, b) => b - a)
  const exited = new Promise((r) => child!.once("exit", r))
  child.kill("SIGTERM")
  await exited
  child = undefined
  console.log(`${label}: server CPU ${cpu.toFixed(2)} s; health p50/p99/max ${latency[Math.floor(latency.length / 2)]!.toFixed(0)}/${latency[Math.floor(latency.length * 0.99)]!.toFixed(0)}/${latency.at(-1)!.toFixed(0)} ms (${latency.length}); main-thread CPU a probe waited through, longest: ${waited.slice(0, 6).join(", ")} ms`)
  console.log(readFileSync(lagOut, "utf8").split("\n").slice(0, 8).map((l) => `  ${l}`).join("\n"))
  rmSync(dir, { recursive: true, force: true })
}

const main = async () => {
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < roots.length; i++) {
      const root = roots[(i + round) % roots.length]!
      await run(root, `round ${round + 1} ${root}`)
    }
  }
}
main()
