/**
 * /metrics holds the documented set and nothing else. Every family the built process
 * exposes (after requests, so the request and upstream families exist) is named in the
 * README's Metrics table (`process_*` and `nodejs_*` as written there); Effect's runtime
 * counters (`effect_fiber_*`) are not part of it, but for the live fiber count the README lists.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { http, type RunningService, startBuilt } from "../support/process.js"

let dir: string
let gw: RunningService

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "metrics-set-"))
  gw = await startBuilt({ SVC_DATABASE_URL: `file:${join(dir, "workspace.db")}` })
}, 60_000)

afterAll(async () => {
  await gw?.stop()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** The metric names of the README's Metrics table (first column, in backticks). */
const documented = (): ReadonlyArray<RegExp> => {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
  const section = readme.slice(readme.indexOf("### Metrics"), readme.indexOf("\n### ", readme.indexOf("### Metrics") + 1))
  const names = section.split("\n").filter((l) => l.startsWith("| `")).flatMap((l) => l.split("|")[1]!.match(/`[^`]+`/g) ?? [])
  return names.map((n) => new RegExp(`^${n.slice(1, -1).replace(/\*/g, "[a-z0-9_]+")}$`))
}

it("exposes only the metric families the README lists", async () => {
  const entities = await http("GET", `${gw.url}/v1/entities`)
  await http("GET", `${gw.url}/v1/entities/${entities.body[0].id}/tasks`)
  const text = (await http("GET", `${gw.url}/metrics`)).text
  const families = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!)
  expect(families).toContain("http_requests_total")
  expect(families).toContain("workspace_calls_total")
  const known = documented()
  expect(known.length).toBeGreaterThan(5)
  expect(families.filter((f) => !known.some((re) => re.test(f)))).toEqual([])
}, 60_000)
