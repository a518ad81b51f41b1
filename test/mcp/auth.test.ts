/**
 * Authentication at /mcp, on the real process: every request needs `Authorization: Bearer
 * <agent API key>` of an agent of this tenant; anything else is a 401 with `WWW-Authenticate:
 * Bearer` and no MCP message is handled. Also `svc mcp`, the same tools over stdio.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http } from "../support/process.js"
import { AGENT_A, call, connect, KEY_A, KEY_GLOBEX, type McpProcess, ok, postMcp, startMcpProcess, TASK_PREPARE } from "./world.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

let gw: McpProcess

beforeAll(async () => {
  gw = await startMcpProcess({ SVC_MCP_AUTH_FAILURE_BURST: "100" })
}, 60_000)

afterAll(async () => {
  await gw?.cleanup()
})

/** A 401 in the error shape, with the bearer challenge, and nothing of MCP in it. */
const expect401 = async (res: Response, invalid: boolean) => {
  expect(res.status).toBe(401)
  const challenge = res.headers.get("www-authenticate")!
  expect(challenge).toMatch(/^Bearer realm="mcp"/)
  expect(challenge.includes("error=\"invalid_token\"")).toBe(invalid)
  const body = await res.json()
  expect(body).toEqual({
    statusCode: 401,
    error: "Unauthorized",
    message: invalid ? "Invalid agent API key" : "Missing agent API key: send Authorization: Bearer <agent API key>"
  })
}

describe("authentication", () => {
  it("a valid key of this tenant's agent gets in", async () => {
    const res = await postMcp(gw.url, { authorization: `Bearer ${KEY_A}` })
    expect(res.status).toBe(200)
    expect(((await res.json()) as any).result.tools.length).toBeGreaterThan(0)
  })

  it("no Authorization header: 401 (every method)", async () => {
    await expect401(await postMcp(gw.url, {}), false)
    for (const method of ["GET", "DELETE", "PUT"]) await expect401(await fetch(`${gw.url}/mcp`, { method }), false)
  })

  it("a malformed header, an unknown key, an empty or oversized token: 401 invalid_token", async () => {
    for (
      const header of [
        `Basic ${Buffer.from(`x:${KEY_A}`).toString("base64")}`,
        "Bearer",
        "Bearer ",
        KEY_A,
        `Bearer ${KEY_A.slice(0, -1)}x`,
        `Bearer ${KEY_A}${KEY_A}`,
        `Bearer ${"k".repeat(600)}`,
        `Bearer ${KEY_A} extra`
      ]
    ) {
      await expect401(await postMcp(gw.url, { authorization: header }), true)
    }
  })

  it("another tenant's agent's key: 401, exactly like an unknown key", async () => {
    await expect401(await postMcp(gw.url, { authorization: `Bearer ${KEY_GLOBEX}` }), true)
  })

  it("a deleted agent's key: 401 (it worked before the delete)", async () => {
    const created = await http("POST", `${gw.adminUrl}/workspace/registry/agents`, {
      kind: "claude",
      externalRef: "agent_temp",
      name: "Temporary",
      tenantSlug: "acme"
    })
    expect(created.status).toBe(201)
    const key = created.body.apiKey as string
    expect((await postMcp(gw.url, { authorization: `Bearer ${key}` })).status).toBe(200)
    expect((await http("DELETE", `${gw.adminUrl}/workspace/registry/agents/${created.body.id}`)).status).toBe(204)
    await expect401(await postMcp(gw.url, { authorization: `Bearer ${key}` }), true)
    expect(gw.output()).not.toContain(key)
  })

  it("the SDK client with a bad key fails to connect with the 401", async () => {
    await expect(connect(gw.url, "ak_nobody_0123456789")).rejects.toThrow(/401|Invalid agent API key/)
  })

  it("GET /mcp with a valid key: 405, POST only (stateless: no SSE stream)", async () => {
    const res = await fetch(`${gw.url}/mcp`, { headers: { authorization: `Bearer ${KEY_A}`, accept: "text/event-stream" } })
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("POST")
  })

  it("no key ever appears in the process output", () => {
    for (const key of [KEY_A, KEY_GLOBEX, KEY_A.slice(0, -1)]) expect(gw.output()).not.toContain(key)
  })
})

describe("svc mcp: the same tools over stdio", () => {
  const stdio = (env: Record<string, string>) =>
    new StdioClientTransport({
      command: process.execPath,
      // The `svc` bin (the bundled CLI); through tsx from the sources each start cost about 2 s of CPU more.
      args: ["src/cli/bin.mjs", "mcp", "--url", gw.url],
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", ...env },
      stderr: "pipe"
    })

  it("lists the gateway's tools and calls them as the agent of SVC_AGENT_KEY", async () => {
    const client = new Client({ name: "stdio-test", version: "1.0.0" })
    await client.connect(stdio({ SVC_AGENT_KEY: KEY_A }))
    try {
      const direct = await connect(gw.url, KEY_A)
      expect((await client.listTools()).tools).toEqual((await direct.listTools()).tools)
      await direct.close()
      const task = ok(await call(client, "get_task", { taskId: TASK_PREPARE }))
      expect(task.assignment).toEqual({ stepId: "prepare", agentId: AGENT_A, assignedToYou: true })
      const error = await call(client, "get_task", { taskId: "00000000-0000-4000-8000-000000000000" })
      expect(error.isError).toBe(true)
    } finally {
      await client.close()
    }
  }, 30_000)

  it("a bad key: the stdio server exits saying the gateway answered 401", async () => {
    const transport = stdio({ SVC_AGENT_KEY: "ak_wrong_0123456789abcdef" })
    let stderr = ""
    transport.stderr?.on("data", (d) => (stderr += d))
    const client = new Client({ name: "stdio-test", version: "1.0.0" })
    await expect(client.connect(transport)).rejects.toThrow()
    expect(stderr).toMatch(/401/)
    expect(stderr).not.toContain("ak_wrong_0123456789abcdef")
  }, 30_000)
})
