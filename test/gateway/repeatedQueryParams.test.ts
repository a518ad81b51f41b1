/**
 * On the built process: a declared one-value query parameter given more
 * than once (`?limit=1&limit=2`, `?status=A&status=B`) is a 400 that says so, not the decoder's
 * "Expected string, actual [...]" (or, for status, `Expected "IN_PROGRESS" | ... actual
 * ["COMPLETED","FAILED"]`, which reads as if the values were wrong). Unknown names still come first.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { ACME_US, EXPENSE_TASK } from "../support/world.js"

let gateway: RunningService
let dir: string

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "repeated-query-"))
  gateway = await startBuilt({ SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href })
}, 60_000)

afterAll(async () => {
  await gateway?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const expect400 = async (path: string, message: string) => {
  const res = await http("GET", `${gateway.url}${path}`)
  expect(res.body, path).toEqual({ statusCode: 400, message, error: "Bad Request" })
}

describe("a one-value query parameter given twice", () => {
  it("is a 400 naming it and saying it came more than once", async () => {
    const tasks = `/v1/entities/${ACME_US}/tasks`
    await expect400(`${tasks}?limit=1&limit=2`, "limit: is given 2 times, expected once")
    await expect400(`${tasks}?status=COMPLETED&status=FAILED`, "status: is given 2 times, expected once")
    await expect400(`${tasks}?status=COMPLETED&st%61tus=COMPLETED&status=`, "status: is given 3 times, expected once")
    await expect400(`/v1/tasks/${EXPENSE_TASK}/events?after=1&after=2`, "after: is given 2 times, expected once")
    await expect400(`/v1/tasks/${EXPENSE_TASK}/files?source=a&source=b`, "source: is given 2 times, expected once")
    // An unknown name is still the first thing said.
    await expect400(`${tasks}?limit=1&limit=2&lmit=3`, `lmit: is unexpected, expected: "status" | "awaiting" | "limit" | "cursor"`)
    // Once each is fine, and the page is the one asked for.
    const page = await http("GET", `${gateway.url}${tasks}?status=IN_PROGRESS&limit=1`)
    expect(page.status).toBe(200)
    expect(page.body).toHaveLength(1)
    expect(page.headers.get("x-next-cursor")).toMatch(/^[A-Za-z0-9_-]+$/)
  }, 30_000)
})
