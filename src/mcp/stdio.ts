/**
 * `svc mcp`: the agent tool server over stdio, for local agent hosts that start their tools as
 * a subprocess. It holds no tool logic: it is an MCP proxy that forwards `tools/list` and
 * `tools/call` to a gateway's /mcp over HTTP with the agent's key (SVC_AGENT_KEY), so every
 * tool still runs, is authenticated and is attributed on the gateway. Nothing but MCP messages
 * is written to stdout.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { API_VERSION } from "../api/version.js"

export interface StdioProxyOptions {
  /** The gateway's base URL (its /mcp is used). */
  readonly gatewayUrl: string
  /** The agent's API key; sent only as the bearer token of the HTTP requests. */
  readonly apiKey: string
}

/** The /mcp endpoint of a gateway base URL. */
export const mcpUrlOf = (gatewayUrl: string) => new URL("mcp", gatewayUrl.replace(/\/*$/, "/"))

/**
 * Connects to the gateway (failing as the gateway answers: a bad key is a 401 there), then
 * serves stdin/stdout until stdin ends. Resolves when the stdio session is over.
 */
export const runStdioProxy = async (options: StdioProxyOptions): Promise<void> => {
  const upstream = new Client({ name: "svc-mcp", version: API_VERSION })
  await upstream.connect(
    new StreamableHTTPClientTransport(mcpUrlOf(options.gatewayUrl), {
      requestInit: { headers: { authorization: `Bearer ${options.apiKey}` } }
    })
  )
  const info = upstream.getServerVersion() ?? { name: "tenant-gateway", version: API_VERSION }
  const instructions = upstream.getInstructions()
  const server = new Server(
    { name: info.name, version: info.version },
    { capabilities: { tools: { listChanged: false } }, ...(instructions !== undefined ? { instructions } : {}) }
  )
  server.setRequestHandler(ListToolsRequestSchema, (request) => upstream.listTools(request.params))
  server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
    upstream.callTool(request.params, undefined, { signal: extra.signal }))
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve()
  })
  const transport = new StdioServerTransport()
  await server.connect(transport)
  process.stdin.once("end", () => void server.close())
  await closed
  await upstream.close()
}
