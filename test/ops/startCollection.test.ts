/**
 * The collection the built gateway runs just after it starts listening is V8's memory-reducing
 * one (src/lib/startupGarbage.ts): a plain full collection leaves start-up's sparse old-generation
 * pages committed, about 4.5 MB of an idle cell's private memory (bench/RESULTS.md). Seen on the
 * real process through V8's own trace of its collections.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningService, startBuilt } from "../support/process.js"

describe("the built gateway's collection after start", () => {
  let dir: string
  let service: RunningService

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "svc-startgc-"))
    service = await startBuilt({ SVC_DATABASE_URL: `file:${path.join(dir, "workspace.db")}`, SVC_ADMIN_PORT: "off" }, ["--trace-gc"])
  }, 60_000)

  afterAll(async () => {
    await service?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it("is a memory-reducing mark-compact that runs after the process listens", async () => {
    expect((await fetch(`${service.url}/v1/health`)).status).toBe(200)
    const afterListening = () => service.output().slice(service.output().indexOf("tenant gateway listening on"))
    await expect.poll(afterListening, { timeout: 15_000 }).toMatch(/Mark-Compact \(reduce\)/)
    // It shrinks the committed heap: "(before) -> used (after)" in V8's line, committed after < before.
    const line = /Mark-Compact \(reduce\) [\d.]+ \(([\d.]+)\) -> [\d.]+ \(([\d.]+)\) MB/.exec(afterListening())
    expect(line).not.toBeNull()
    expect(Number(line![2])).toBeLessThan(Number(line![1]))
  }, 60_000)
})
