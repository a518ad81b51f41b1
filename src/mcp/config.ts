/**
 * Settings of the agent tool server (/mcp), read once at start with Effect Config. Listed with
 * their defaults in `.env.example` and the README.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

export interface McpConfigShape {
  /** read_file returns documents up to this many bytes (larger ones: a tool error naming the download URL). */
  readonly readMaxBytes: number
  /** Failed authentications one address may make in a burst before it is answered 429. */
  readonly authFailureBurst: number
  /** One more failed attempt is allowed per this many milliseconds once the burst is spent. */
  readonly authFailureRefillMs: number
}

export const DEFAULT_MCP_CONFIG: McpConfigShape = {
  readMaxBytes: 1024 * 1024,
  authFailureBurst: 10,
  authFailureRefillMs: 6_000
}

const positiveInt = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: `${name} must be a positive integer`, validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

export const mcpConfigFromEnv: Config.Config<McpConfigShape> = Config.all({
  readMaxBytes: positiveInt("SVC_MCP_READ_MAX_BYTES", DEFAULT_MCP_CONFIG.readMaxBytes),
  authFailureBurst: positiveInt("SVC_MCP_AUTH_FAILURE_BURST", DEFAULT_MCP_CONFIG.authFailureBurst),
  authFailureRefillMs: positiveInt("SVC_MCP_AUTH_FAILURE_REFILL_MS", DEFAULT_MCP_CONFIG.authFailureRefillMs)
})

export class McpConfig extends Context.Tag("McpConfig")<McpConfig, McpConfigShape>() {
  static readonly fromEnv = Layer.effect(McpConfig, mcpConfigFromEnv)
  static readonly make = (config: Partial<McpConfigShape> = {}) => Layer.succeed(McpConfig, { ...DEFAULT_MCP_CONFIG, ...config })
}
