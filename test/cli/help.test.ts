/**
 * Issue 11, the CLI as a daily tool: help written for it (every command, every option, lines of
 * at most 100 columns, no colour codes), global options before or after the command, JSON
 * output that is only JSON, and the bundled bin (what `tenant-svc` runs).
 */
import type * as Command from "effect/cli/Command"
import type * as HelpDoc from "effect/cli/HelpDoc"
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { svc as tree } from "../../src/cli/app.js"
import { normalizeArgs } from "../../src/cli/args.js"
import { COMMANDS, helpFor } from "../../src/cli/help.js"
import { type Gateway, ROOT, startGateway, stopAllProcesses, svc } from "./harness.js"

/**
 * The HelpDoc effect/cli generates for a command. Effect 4 exposes it only to its own renderer
 * (`buildHelpDoc` on every command value), so this reads it there: the flags the parser takes.
 */
const helpDocOf = (command: Command.Command.Any, path: ReadonlyArray<string>): HelpDoc.HelpDoc =>
  (command as unknown as { readonly buildHelpDoc: (path: ReadonlyArray<string>) => HelpDoc.HelpDoc }).buildHelpDoc(path)

/** Every leaf command of the effect/cli tree with the flags it takes, from its generated help. */
const leaves = (): Array<{ path: string; flags: Array<string> }> => {
  const out: Array<{ path: string; flags: Array<string> }> = []
  const walk = (command: Command.Command.Any, path: ReadonlyArray<string>) => {
    const children = command.subcommands.flatMap((group) => group.commands)
    const key = path.join(" ")
    if (path.length > 0 && (children.length === 0 || key in COMMANDS)) {
      const flags = helpDocOf(command, ["svc", ...path]).flags.flatMap((flag) => [`--${flag.name}`, ...flag.aliases])
      out.push({ path: key, flags: [...new Set(flags.filter((f) => f.startsWith("--")))] })
    }
    for (const child of children) walk(child, [...path, child.name])
  }
  walk(tree, [])
  return out
}

describe("help", () => {
  it("has a page for every command, naming every option it takes", () => {
    const all = leaves()
    expect(all.length).toBeGreaterThan(20)
    for (const { path, flags } of all) {
      const page = helpFor(path.split(" "), "0")
      expect(page, path).toBeDefined()
      for (const flag of flags) expect(page, `${path} ${flag}`).toContain(flag.replace(/^--no-/, "--no-"))
    }
    // And no page for a command that does not exist.
    expect(Object.keys(COMMANDS).sort()).toEqual(all.map((l) => l.path).sort())
  })

  it("prints plain text of at most 100 columns, with no generic placeholders", async () => {
    const pages = [[], ["tasks"], ["tasks", "start"], ["files", "ingest"], ["agents", "register"], ["gl", "connect"]]
    const runs = await Promise.all(pages.map((p) => svc([...p, "--help"], {})))
    for (const [i, r] of runs.entries()) {
      expect(r.code, `${pages[i]!.join(" ")} --help: ${r.stderr}`).toBe(0)
      expect(r.stdout).not.toMatch(/\x1b\[/)
      expect(r.stdout).not.toContain("A user-defined piece of text")
      for (const line of r.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100)
    }
    expect(runs[2]!.stdout).toContain("Usage: svc tasks start <entityId> <workflowId>")
    expect(runs[0]!.stdout).toContain("tenant-svc")
  }, 120_000)

  it("moves global options from before the command to after it", () => {
    expect(normalizeArgs(["--json", "health"]).argv).toEqual(["health", "--json"])
    expect(normalizeArgs(["--url", "http://h:1", "tasks", "--json", "list", "x"]).argv).toEqual([
      "tasks",
      "list",
      "--url",
      "http://h:1",
      "--json",
      "x"
    ])
    expect(normalizeArgs(["task", "approve", "t", "--comments", "--json"]).argv).toEqual(["task", "approve", "t", "--comments", "--json"])
    expect(normalizeArgs(["--help"])).toMatchObject({ help: true, path: [] })
    expect(normalizeArgs(["files", "upload", "--help"])).toMatchObject({ help: true, path: ["files", "upload"] })
    expect(normalizeArgs(["data", "ingest", "t", "f", "--", "--help"]).help).toBe(false)
  })
})

describe("the bundled CLI against a gateway", () => {
  let gw: Gateway
  beforeAll(async () => {
    gw = await startGateway()
  }, 60_000)
  afterAll(async () => {
    await gw?.stop()
    stopAllProcesses()
  })

  it("takes --json and --url before or after the command, and prints only JSON", async () => {
    const runs = await Promise.all([
      svc(["--json", "health"], { env: { SVC_URL: gw.url } }),
      svc(["health", "--json"], { env: { SVC_URL: gw.url } }),
      svc(["--url", gw.url, "--json", "entities", "list"], {}),
      svc(["entities", "--json", "list", "--url", gw.url], {})
    ])
    for (const r of runs) expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(runs[0]!.stdout)).toEqual({ status: "ok" })
    expect(JSON.parse(runs[1]!.stdout)).toEqual({ status: "ok" })
    expect(JSON.parse(runs[2]!.stdout).length).toBeGreaterThan(0)
    expect(JSON.parse(runs[3]!.stdout)).toEqual(JSON.parse(runs[2]!.stdout))
  }, 60_000)

  it("answers `health` from the bundle quickly (timing printed; the 300 ms target is the bench's)", async () => {
    await svc(["health"], { env: { SVC_URL: gw.url } }) // builds dist/ if stale
    const times: Array<number> = []
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      const code = await new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, [`${ROOT}src/cli/bin.mjs`, "health", "--url", gw.url], { stdio: "ignore" })
        child.once("exit", resolve)
      })
      times.push(performance.now() - started)
      expect(code).toBe(0)
    }
    times.sort((a, b) => a - b)
    console.log(`svc health, bundled: median ${times[2]!.toFixed(0)} ms (${times.map((t) => t.toFixed(0)).join(", ")})`)
    expect(times[2]!).toBeLessThan(3000)
  }, 60_000)
})

describe("the svc bin's start", () => {
  it("checks the build without loading esbuild (it is loaded only to rebuild)", async () => {
    const { spawnSync } = await import("node:child_process")
    const { mkdtempSync, readFileSync, rmSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const path = await import("node:path")
    const { pathToFileURL } = await import("node:url")
    // Fresh first (this may build), then a start that only checks.
    expect(spawnSync(process.execPath, [`${ROOT}scripts/build-if-stale.mjs`], { encoding: "utf8" }).status).toBe(0)
    const dir = mkdtempSync(path.join(tmpdir(), "svc-bin-"))
    try {
      const out = path.join(dir, "loads.txt")
      const recorder = pathToFileURL(`${ROOT}test/cli/recordLoads.mjs`).href
      const run = spawnSync(process.execPath, ["--import", recorder, `${ROOT}src/cli/bin.mjs`, "--help"], {
        env: { ...process.env, RECORD_LOADS_FILE: out },
        encoding: "utf8"
      })
      expect(run.status, run.stderr).toBe(0)
      const loads = readFileSync(out, "utf8").split("\n").filter(Boolean)
      expect(loads.some((url) => url.endsWith("/scripts/build-if-stale.mjs"))).toBe(true)
      expect(loads.filter((url) => url.includes("/node_modules/esbuild/") || url.endsWith("/scripts/build-console.mjs"))).toEqual([])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
