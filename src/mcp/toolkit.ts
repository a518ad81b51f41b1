/**
 * How a tool is declared and called. A tool names its input and output once, as Effect
 * Schemas: the same schemas give the JSON Schemas `tools/list` advertises (./jsonSchema.ts),
 * decode the arguments of `tools/call` (with the HTTP API's rules and messages: closed objects,
 * the DTOs' own filters, the decode-error formatter of src/http/errors/errorResponse.ts) and encode the
 * structured result. Every failure becomes an MCP tool error (`isError: true`) carrying the
 * message the HTTP API would answer; nothing is a protocol crash.
 */
import type { CallToolResult, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { PAYLOAD_PARSE_OPTIONS } from "../api/dtos.js"
import { BadRequest } from "../api/errors.js"
import { boundMessage, describeIssues } from "../http/errors/errorMessages.js"
import type { FileFetcher } from "../files/FileFetcher.js"
import type { Tenant } from "../services/Tenant.js"
import type { TenantConfig } from "../config/TenantConfig.js"
import type { Workspace, WorkspaceClient } from "../upstream/WorkspaceClient.js"
import type { Agent } from "../upstream/registry.js"
import type { McpConfig } from "./McpConfig.js"
import { objectJsonSchema } from "./jsonSchema.js"
import type { AgentTimeline } from "./AgentTimeline.js"

/** Who is calling, and from where (the origin the request named, for absolute links). */
export interface ToolContext {
  readonly agent: Agent
  readonly tenant: Workspace.Tenant
  readonly origin: string
}

export type ToolServices = WorkspaceClient | Tenant | TenantConfig | FileFetcher | McpConfig | AgentTimeline

/** A failure a tool reports: any error with the gateway's error fields. */
export interface ToolFailure {
  readonly statusCode: number
  readonly error: string
  readonly message: string
}

export type Content = CallToolResult["content"][number]

export interface ToolReply<O> {
  readonly structured: O
  /** Content blocks; by default the structured result as JSON text. */
  readonly content?: ReadonlyArray<Content>
}

export interface Tool<I, O> {
  readonly name: string
  readonly title: string
  readonly description: string
  /** Decoded from the call's arguments (JSON): no services needed. */
  readonly input: Schema.Codec<I, unknown>
  readonly output: Schema.Codec<O, unknown>
  /** Reads only (MCP readOnlyHint); writes are attributed to the agent in the task's timeline. */
  readonly readOnly: boolean
  readonly run: (input: I, context: ToolContext) => Effect.Effect<ToolReply<O>, ToolFailure, ToolServices>
}

export type AnyTool = Tool<any, any>

export const tool = <I, O>(definition: Tool<I, O>): AnyTool => definition

export const reply = <O>(structured: O, content?: ReadonlyArray<Content>): ToolReply<O> =>
  content === undefined ? { structured } : { structured, content }

/** The `tools/list` entry. */
export const listing = (t: AnyTool): McpTool => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: objectJsonSchema(t.input),
  outputSchema: objectJsonSchema(t.output),
  annotations: {
    title: t.title,
    readOnlyHint: t.readOnly,
    destructiveHint: false,
    openWorldHint: false
  }
})

const errorResult = (failure: ToolFailure): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: boundMessage(failure.message) }],
  _meta: { statusCode: failure.statusCode, error: failure.error }
})

/** The decode failure as the HTTP API words it (a 400 naming each field path). */
const badInput = (e: Schema.SchemaError) => new BadRequest({ message: describeIssues(e) })

/** One `tools/call`: decode, run, encode; every failure a tool error. */
export const callTool = (
  t: AnyTool,
  args: unknown,
  context: ToolContext
): Effect.Effect<CallToolResult, never, ToolServices> =>
  // As the HTTP API decodes a body: every problem, and an unknown key is one (src/api/dtos.ts).
  Schema.decodeUnknownEffect(t.input)(args ?? {}, PAYLOAD_PARSE_OPTIONS).pipe(
    Effect.mapError(badInput),
    Effect.flatMap((input) => t.run(input, context)),
    Effect.flatMap(({ content, structured }) =>
      Effect.map(Effect.orDie(Schema.encodeEffect(t.output)(structured)), (encoded): CallToolResult => ({
        content: content !== undefined ? [...content] : [{ type: "text", text: JSON.stringify(encoded) }],
        structuredContent: encoded as Record<string, unknown>
      }))
    ),
    Effect.catch((failure) => Effect.succeed(errorResult(failure))),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(
          Effect.logError(`mcp: tool ${t.name} failed`, cause),
          errorResult({ statusCode: 500, error: "Internal Server Error", message: "Internal server error" })
        )
    )
  ) as Effect.Effect<CallToolResult, never, ToolServices>
