/**
 * Node's tick objects keep their maps in the built process (src/lib/tickObjectMaps.ts): after full
 * collections that find no tick of their own alive, the tick literal's property definitions in
 * process.nextTick are still monomorphic. Without the kept tick the same check read MEGAMORPHIC
 * (in 3 of 3 bare Node processes, and in the built gateway; each tick then costs 370-550 ns
 * instead of 40). V8 is told to keep no unused map across collections
 * (`--retain-maps-for-n-gc=0`): what its default does after a few collections, at once.
 *
 * The process writes to a file: V8's prints go through C's stdio, which lost them on a pipe.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import http from "node:http"
import { tmpdir } from "node:os"
import path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BUILT_ENTRY, freePorts, NODE, NPM_START_NODE_FLAGS } from "../support/process.js"
import { waitFor } from "../support/waitFor.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const CHECKER = fileURLToPath(new URL("./tickFeedback.mjs", import.meta.url))

describe("process.nextTick in the built process", () => {
  let dir: string
  let child: ChildProcess | undefined
  let logFile: string
  let url: string
  const output = () => readFileSync(logFile, "latin1")

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-tick-maps-"))
    logFile = path.join(dir, "out.log")
    const fd = openSync(logFile, "a")
    const [port] = await freePorts(1) as [number]
    url = `http://127.0.0.1:${port}`
    child = spawn(NODE, [...NPM_START_NODE_FLAGS, "--allow-natives-syntax", "--retain-maps-for-n-gc=0", "--import", CHECKER, BUILT_ENTRY], {
      cwd: ROOT,
      env: { ...process.env, HOST: "127.0.0.1", PORT: String(port), SVC_ADMIN_PORT: "off", SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}` },
      stdio: ["ignore", fd, fd]
    })
    closeSync(fd)
    await waitFor("the gateway's health", () => fetch(`${url}/v1/health`).then((r) => r.ok, () => false), { timeoutMs: 30_000, seen: output })
  }, 60_000)

  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve))
      child.kill("SIGKILL")
      await exited
    }
    rmSync(dir, { recursive: true, force: true })
  })

  it("keeps the tick literal's feedback monomorphic through full collections", async () => {
    // Requests first: the server's own ticks (Node's HTTP streams, Effect's fibers).
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 })
    await Promise.all(Array.from({ length: 200 }, () =>
      new Promise<void>((resolve, reject) => {
        http.get(`${url}/v1/health`, { agent }, (res) => {
          res.resume()
          res.on("end", () => resolve())
        }).on("error", reject)
      })))
    agent.destroy()
    child!.kill("SIGUSR2")
    // The first of the checker's prints, whole: the next one has begun after it.
    await waitFor("two of the checker's prints", () => output().split("DebugPrint:").length > 2, {
      timeoutMs: 20_000,
      seen: () => `${output().split("DebugPrint:").length - 1} prints in ${output().length} characters`
    })
    const printed = output().split("DebugPrint:")[1]!
    const definitions = [...printed.matchAll(/DefineKeyedOwnPropertyInLiteral (\w+)/g)].map((m) => m[1])
    // async_id, trigger_async_id, async_context_frame, callback, args.
    expect(definitions.length, printed).toBeGreaterThanOrEqual(3)
    expect(definitions.filter((state) => state !== "MONOMORPHIC"), printed).toEqual([])
  }, 60_000)
})
