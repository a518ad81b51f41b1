/**
 * S3's bodies above the limit, watched from inside: the built gateway under npm start's flags
 * (limit 4 MiB) takes 8 bodies of 64 MiB with Content-Length, then 8 chunked, one at a time
 * (bench/lib/overLimit.ts, as S3 sends them); prints the statuses, RSS after each and its peak
 * (sampled every 20 ms), and, with --inside, the process's own `process.memoryUsage()` every
 * 100 ms (preloaded with --import), where dead body chunks show as `arrayBuffers`.
 *
 * Usage: tsx bench/experiments/over-limit-memory.ts [--inside] [--wait <ms after the last body>]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { postOversized } from "../lib/overLimit.js"
import { freePort } from "../lib/proc.js"
import { startFlags } from "../lib/startFlags.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const MiB = 1024 * 1024
const args = process.argv.slice(2)
const inside = args.includes("--inside")
const waitAt = args.indexOf("--wait")
const waitMs = waitAt < 0 ? 300 : Number(args[waitAt + 1])
const dir = mkdtempSync(join(tmpdir(), "over-limit-"))
const log = join(dir, "memory.log")
const probe = join(dir, "memory.mjs")
writeFileSync(probe, `import { appendFileSync } from "node:fs"
const mb = (n) => (n / 1048576).toFixed(1)
setInterval(() => { const m = process.memoryUsage(); appendFileSync(${JSON.stringify(log)}, \`rss \${mb(m.rss)} heapUsed \${mb(m.heapUsed)} external \${mb(m.external)} arrayBuffers \${mb(m.arrayBuffers)}\\n\`) }, 100).unref()
`)
const port = await freePort()
const child = spawn(process.execPath, [...startFlags(ROOT), ...(inside ? ["--import", probe] : []), "dist/main.js"], {
  cwd: ROOT,
  env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", SVC_ADMIN_PORT: "off", SVC_LOG_LEVEL: "warning", SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}`, SVC_MAX_BODY_BYTES: String(4 * MiB) },
  stdio: ["ignore", "ignore", "inherit"]
})
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, "utf8"))![1]) / 1024
try {
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/v1/health`).then((r) => r.ok, () => false)
    if (up) break
    await new Promise((r) => setTimeout(r, 100))
  }
  await new Promise((r) => setTimeout(r, 500))
  const path = "/v1/tasks/00000000-0000-4000-8000-000000000001/files"
  const before = rss()
  let peak = before
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 20)
  const statuses: Array<number> = []
  for (const chunked of [false, true]) {
    for (let i = 0; i < 8; i++) {
      statuses.push(await postOversized(port, path, 64 * MiB, chunked))
      console.log(`${chunked ? "chunked" : "declared"} ${i}: RSS ${rss().toFixed(1)} MB`)
    }
  }
  await new Promise((r) => setTimeout(r, waitMs))
  clearInterval(sampler)
  console.log(`statuses ${statuses.join(",")}; RSS ${before.toFixed(1)} MB before, peak ${peak.toFixed(1)} MB (+${(peak - before).toFixed(1)} MB)`)
  if (inside) console.log(readFileSync(log, "utf8").trim().split("\n").slice(-5).join("\n"))
} finally {
  child.kill("SIGTERM")
  await new Promise((r) => child.once("exit", r))
  rmSync(dir, { recursive: true, force: true })
}
