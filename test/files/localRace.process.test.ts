/**
 * On the built process: a directory inside the local ingest root is swapped, in a
 * tight loop in another process, with a symbolic link to a directory outside the root while
 * ingests of a file beneath it run. Checking the path and then opening it (O_NOFOLLOW guards only
 * the last component) read the outside file in 13 of 100 tries; the provider now verifies the
 * opened descriptor itself, so no ingest may ever store the outside bytes.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { type BuiltGateway, startGateway } from "./builtGateway.js"

const INSIDE = "inside the root"
const SECRET = "SECRET from outside the root, longer than the inside file"
const TRIES = 200
const CONCURRENCY = 4

let tmp: string
let root: string
let gw: BuiltGateway
let swapper: ChildProcess | undefined

/** Swaps root/dir between the real directory and a symbolic link to the outside one, forever. */
const SWAPPER = `
const fs = require("node:fs")
const [dir, parked, outside] = process.argv.slice(1)
for (;;) {
  try {
    fs.renameSync(dir, parked)
    fs.symlinkSync(outside, dir)
    fs.unlinkSync(dir)
    fs.renameSync(parked, dir)
  } catch {}
}
`

beforeAll(async () => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "local-race-")))
  root = path.join(tmp, "root")
  fs.mkdirSync(path.join(root, "dir"), { recursive: true })
  fs.writeFileSync(path.join(root, "dir", "statement.csv"), INSIDE)
  fs.mkdirSync(path.join(tmp, "outside"))
  fs.writeFileSync(path.join(tmp, "outside", "statement.csv"), SECRET)
  gw = await startGateway({ SVC_LOCAL_INGEST_ROOT: root })
}, 60_000)

afterAll(async () => {
  // Already killed by the test (its exit code stays null, its signal is set): kill only a live one.
  if (swapper?.pid !== undefined && swapper.exitCode === null && swapper.signalCode === null) swapper.kill("SIGKILL")
  await gw?.stop()
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true })
})

describe("the local provider under a directory swap", { timeout: 180_000 }, () => {
  it(`never stores a file from outside the root (${TRIES} tries against a swapping process)`, async () => {
    const taskId = await gw.newTask()
    swapper = spawn(process.execPath, ["-e", SWAPPER, path.join(root, "dir"), path.join(root, "dir.parked"), path.join(tmp, "outside")], {
      stdio: "ignore"
    })
    await new Promise((r) => setTimeout(r, 200))
    const statuses = new Map<number, number>()
    let inside = 0
    let escaped = 0
    let next = 0
    const worker = async () => {
      while (next < TRIES) {
        next++
        const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
          source: "race",
          fileRef: { provider: "local", path: path.join(root, "dir", "statement.csv") }
        })
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        if (res.status === 201) {
          if (res.body.sizeBytes === SECRET.length) escaped++
          else if (res.body.sizeBytes === INSIDE.length) inside++
        } else {
          // A refused try is a 400 in the error shape naming the field, never a 5xx.
          expect(res.status).toBe(400)
          expect(res.body).toMatchObject({ statusCode: 400, error: "Bad Request" })
          expect(res.body.message).toMatch(/^fileRef\.path: /)
        }
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const stopped = swapper.exitCode !== null || swapper.signalCode !== null
      ? Promise.resolve()
      : new Promise((r) => swapper!.once("exit", r))
    if (swapper.exitCode === null) process.kill(swapper.pid!, "SIGKILL")
    const summary = `escaped ${escaped}, inside ${inside}, statuses ${JSON.stringify([...statuses])}`
    expect(escaped, summary).toBe(0)
    // The race was really run: tries were refused mid-swap. And the inside file is read: during
    // the race (most runs), or, on a loaded machine where the swapper kept the link in place
    // throughout, once the directory is back.
    expect(statuses.get(400) ?? 0, summary).toBeGreaterThan(0)
    if (inside === 0) {
      await stopped
      const dir = path.join(root, "dir")
      if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink() === true) fs.unlinkSync(dir)
      if (fs.existsSync(path.join(root, "dir.parked"))) fs.renameSync(path.join(root, "dir.parked"), dir)
      const res = await http("POST", `${gw.url}/v1/tasks/${taskId}/files/ingest`, {
        source: "race",
        fileRef: { provider: "local", path: path.join(dir, "statement.csv") }
      })
      expect([res.status, res.body.sizeBytes], summary).toEqual([201, INSIDE.length])
    }
  })
})
