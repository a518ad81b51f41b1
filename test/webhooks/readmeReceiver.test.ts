/**
 * The README's receiver example, run as written (its port changed to a free one) against the
 * built gateway: it verifies a real delivery with the reference library and prints the event.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, expect, it } from "vitest"
import { freePort, http, NODE, type RunningService, startBuilt } from "../support/process.js"
import { until } from "./receiver.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

const cleanups: Array<() => Promise<void> | void> = []
afterAll(async () => {
  for (const c of cleanups.reverse()) await c()
})

it("the README's receiver verifies and prints a delivery", async () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## Outbound webhooks"))
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1]
  expect(code).toContain("standardwebhooks")
  const dir = mkdtempSync(join(tmpdir(), "webhooks-readme-"))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  // The receiver imports standardwebhooks as a user's project would: from its node_modules.
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"))
  const port = await freePort()
  writeFileSync(join(dir, "receiver.mjs"), code!.replace(".listen(8080)", `.listen(${port}, "127.0.0.1")`))

  const gw: RunningService = await startBuilt({
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
    SVC_WEBHOOK_URL_ALLOW: `127.0.0.1:${port}`
  })
  cleanups.push(() => gw.stop())
  const created = await http("POST", `${gw.adminUrl}/workspace/webhooks`, {
    tenant: "acme",
    url: `http://127.0.0.1:${port}/hooks`,
    events: ["task.created"]
  })
  expect(created.status, created.text).toBe(201)

  let out = ""
  const child = spawn(NODE, [join(dir, "receiver.mjs")], {
    cwd: dir,
    env: { ...process.env, WEBHOOK_SECRET: created.body.secret },
    stdio: ["ignore", "pipe", "pipe"]
  })
  child.stdout.on("data", (d) => (out += d))
  child.stderr.on("data", (d) => (out += d))
  cleanups.push(() => {
    if (child.exitCode === null) process.kill(child.pid!, "SIGTERM")
  })
  await until("the receiver listening", async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: "{}" })
      return r.status === 400 ? true : undefined
    } catch {
      return undefined
    }
  })

  const task = await http("POST", `${gw.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "expense-review", context: { period: "2026-11" } })
  expect(task.status).toBe(201)
  await until("the event printed", async () => (out.includes(task.body.id) ? true : undefined))
  expect(out).toMatch(/^task\.created /m)
  // The receiver prints before it answers, and the gateway logs the attempt once the answer is
  // back: read the log once it holds the attempt (on a loaded machine it was read before).
  const attempt = await until("the delivery logged", async () => {
    const log = await http("GET", `${gw.adminUrl}/workspace/webhooks/${created.body.id}/deliveries?tenant=acme`)
    return log.body[0]
  })
  expect(attempt).toMatchObject({ outcome: "delivered", statusCode: 204 })
}, 60_000)
