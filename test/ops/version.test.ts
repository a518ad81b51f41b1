/**
 * One version, package.json's, wherever the package names one: `svc --version`, the MCP server's
 * serverInfo, the gateway's and the workspace's OpenAPI documents (the client package's manifest:
 * test/client/package.test.ts).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { svc } from "../cli/harness.js"
import { connect, KEY_A, type McpProcess, startMcpProcess } from "../mcp/world.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const VERSION = (JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { version: string }).version

let gw: McpProcess

beforeAll(async () => {
  gw = await startMcpProcess({}, { built: true })
}, 60_000)

afterAll(async () => {
  await gw?.cleanup()
})

describe("one version", { timeout: 60_000 }, () => {
  it("svc --version prints package.json's", async () => {
    const run = await svc(["--version"], { cwd: ROOT })
    expect(run.code, run.stderr).toBe(0)
    // "tenant-svc 1.0.0": the words around it are the CLI's.
    expect(run.stdout.trim().split(/\s+/).at(-1)).toBe(VERSION)
  })

  it("the MCP server and the OpenAPI documents say package.json's", async () => {
    const client = await connect(gw.url, KEY_A)
    try {
      expect(client.getServerVersion()).toEqual({ name: "tenant-gateway", version: VERSION })
    } finally {
      await client.close()
    }
    const openapi = await fetch(`${gw.url}/openapi.json`).then((r) => r.json()) as { info: { version: string } }
    expect(openapi.info.version).toBe(VERSION)
    const workspace = await fetch(`${gw.adminUrl}/workspace/openapi.json`).then((r) => r.json()) as { info: { version: string } }
    expect(workspace.info.version).toBe(VERSION)
  })
})
