/**
 * The world of the tool-server tests: test/fixtures/example.json plus three registered agents
 * (two of acme, one of globex, each with a known key) and a workflow whose steps are assigned
 * to agent A, with one task at each assigned step. Also: the real gateway process on it, and an
 * MCP client (the official SDK's) over Streamable HTTP.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { type RunningService, startBuilt, startService } from "../support/process.js"
import { ACME, ACME_US, GLOBEX } from "../support/world.js"

export const AGENT_A = "a11a0000-0000-4000-8000-0000000000a1"
export const AGENT_B = "b22b0000-0000-4000-8000-0000000000b2"
export const AGENT_GLOBEX = "c33c0000-0000-4000-8000-0000000000c3"
export const KEY_A = "ak_test_agent_a_0123456789abcdefghijklmnop"
export const KEY_B = "ak_test_agent_b_0123456789abcdefghijklmnop"
export const KEY_GLOBEX = "ak_test_agent_globex_0123456789abcdefghij"

/** agent-close at `prepare` (FILE_UPLOAD, assigned to A). */
export const TASK_PREPARE = "d1000000-0000-4000-8000-0000000000d1"
/** agent-close at `review` (APPROVAL, assigned to A); `sign_off` after it is not assigned. */
export const TASK_REVIEW = "d2000000-0000-4000-8000-0000000000d2"

export const CLOSE_SOURCE = "close_pack"

const example = JSON.parse(readFileSync(new URL("../fixtures/example.json", import.meta.url), "utf8")) as Record<string, Array<unknown>>

export const mcpFixture = () => ({
  ...example,
  workflows: [
    ...example.workflows!,
    {
      id: "agent-close",
      name: "Agent close",
      tenantId: ACME,
      runbook: {
        configSchema: { global: { type: "object", properties: {} } },
        steps: [
          {
            id: "prepare",
            title: "Prepare the close pack",
            displayHint: { component: "FILE_UPLOAD", config: {} },
            args: { source: CLOSE_SOURCE },
            agentId: AGENT_A
          },
          { id: "review", title: "Review the pack", displayHint: { component: "APPROVAL", config: {} }, args: {}, agentId: AGENT_A },
          { id: "sign_off", title: "Sign off", displayHint: { component: "APPROVAL", config: {} }, args: {} }
        ]
      }
    }
  ],
  tasks: [
    ...example.tasks!,
    ...[[TASK_PREPARE, "prepare"], [TASK_REVIEW, "review"]].map(([id, step]) => ({
      id,
      tenantId: ACME,
      entityId: ACME_US,
      workflowId: "agent-close",
      title: `Close ${step}`,
      status: "IN_PROGRESS",
      priority: "HIGH",
      createdAt: "2026-11-10T09:00:00.000Z",
      currentStep: step
    }))
  ],
  agents: [
    { id: AGENT_A, tenantId: ACME, kind: "claude", externalRef: "agent_a", name: "Agent A", apiKey: KEY_A },
    { id: AGENT_B, tenantId: ACME, kind: "openai", externalRef: "openai://asst_b", name: "Agent B", apiKey: KEY_B },
    { id: AGENT_GLOBEX, tenantId: GLOBEX, kind: "claude", externalRef: "agent_g", name: "Globex agent", apiKey: KEY_GLOBEX }
  ]
})

export interface McpProcess extends RunningService {
  readonly cleanup: () => Promise<void>
}

/**
 * The real gateway (src/main.ts, or with `built` dist/main.js as npm start runs it) on a temp
 * database seeded with the fixture (by default mcpFixture()), bound to acme.
 */
export const startMcpProcess = async (
  env: Record<string, string> = {},
  options: { readonly fixture?: unknown; readonly built?: boolean } = {}
): Promise<McpProcess> => {
  const dir = mkdtempSync(join(tmpdir(), "mcp-"))
  const seed = join(dir, "fixture.json")
  writeFileSync(seed, JSON.stringify(options.fixture ?? mcpFixture()))
  const service = await (options.built === true ? startBuilt : startService)({
    SVC_TENANT_SLUG: "acme",
    SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href,
    SVC_SEED_FILE: seed,
    ...env
  })
  return {
    ...service,
    cleanup: async () => {
      await service.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** An MCP client (initialized) for `key` against the gateway at `baseUrl`. */
export const connect = async (baseUrl: string, key: string): Promise<Client> => {
  const client = new Client({ name: "mcp-test", version: "1.0.0" })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${baseUrl}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } })
  )
  return client
}

export const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>

/** The structured result of a successful call (fails the test on a tool error). */
export const ok = (result: CallToolResult): any => {
  if (result.isError) throw new Error(`tool error: ${JSON.stringify(result.content)}`)
  return result.structuredContent
}

/** The message of a tool error (fails the test on a success). */
export const toolError = (result: CallToolResult): { readonly message: string; readonly statusCode: unknown } => {
  if (result.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(result.structuredContent)}`)
  const [first] = result.content
  return { message: first?.type === "text" ? first.text : "", statusCode: result._meta?.statusCode }
}

/** A raw POST to /mcp: a JSON-RPC body with the given headers. */
export const postMcp = (baseUrl: string, headers: Record<string, string>, body: unknown = { jsonrpc: "2.0", id: 1, method: "tools/list" }) =>
  fetch(`${baseUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body)
  })
