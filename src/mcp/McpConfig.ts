/**
 * Settings of the agent tool server (/mcp), read once at start with Effect Config. Listed with
 * their defaults in `.env.example` and the README.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import { defaultOf, type SettingName } from "../config/settings.js"
import { checkedSetting } from "../files/IngestConfig.js"

/** Where the tool server listens on the gateway's router (./route.ts mounts it, ./server.ts names it). */
export const MCP_PATH = "/mcp"

export interface McpConfigShape {
  /** read_file returns documents up to this many bytes (larger ones: a tool error naming the download URL). */
  readonly readMaxBytes: number
  /** Failed authentications one client address (and one presented key) may make in a burst before it is answered 429. */
  readonly authFailureBurst: number
  /** One more failed attempt is allowed per this many milliseconds once the burst is spent. */
  readonly authFailureRefillMs: number
  /** Lower-case name of the header trusted proxies write the client address into; undefined: the socket address. */
  readonly clientAddressHeader: string | undefined
  /** How many trusted proxies stand in front (which entry of the header, from the right, is the client). */
  readonly trustedProxyHops: number
  /** Messages one JSON-RPC batch may hold (the SDK's transport refuses more than 100 itself). */
  readonly maxBatch: number
}

/** The SDK transport's own cap on a batch (MAX_BATCH_SIZE in its server/requestBody.js). */
export const SDK_MAX_BATCH = 100

export const DEFAULT_MCP_CONFIG: McpConfigShape = {
  readMaxBytes: defaultOf("SVC_MCP_READ_MAX_BYTES"),
  authFailureBurst: defaultOf("SVC_MCP_AUTH_FAILURE_BURST"),
  authFailureRefillMs: defaultOf("SVC_MCP_AUTH_FAILURE_REFILL_MS"),
  clientAddressHeader: undefined,
  trustedProxyHops: defaultOf("SVC_TRUSTED_PROXY_HOPS"),
  maxBatch: defaultOf("SVC_MCP_MAX_BATCH")
}

/** RFC 9110 token: a header name. Empty means off. */
const headerName = (name: string) =>
  checkedSetting(
    Config.map(Config.String(name), (s) => s.trim().toLowerCase()),
    `${name} must be an HTTP header name (e.g. x-forwarded-for), or empty`,
    (s) => /^[!#$%&'*+.^_`|~0-9a-z-]*$/.test(s)
  ).pipe(
    Config.map((s) => (s === "" ? undefined : s)),
    Config.withDefault(undefined)
  )

const positiveInt = (name: SettingName) =>
  checkedSetting(Config.Int(name), `${name} must be a positive integer`, (n) => n > 0).pipe(Config.withDefault(defaultOf(name)))

export const mcpConfigFromEnv: Config.Config<McpConfigShape> = Config.all({
  readMaxBytes: positiveInt("SVC_MCP_READ_MAX_BYTES"),
  authFailureBurst: positiveInt("SVC_MCP_AUTH_FAILURE_BURST"),
  authFailureRefillMs: positiveInt("SVC_MCP_AUTH_FAILURE_REFILL_MS"),
  clientAddressHeader: headerName("SVC_CLIENT_ADDRESS_HEADER"),
  trustedProxyHops: positiveInt("SVC_TRUSTED_PROXY_HOPS"),
  maxBatch: checkedSetting(
    Config.Int("SVC_MCP_MAX_BATCH"),
    `SVC_MCP_MAX_BATCH must be an integer from 1 to ${SDK_MAX_BATCH}`,
    (n) => n >= 1 && n <= SDK_MAX_BATCH
  ).pipe(Config.withDefault(DEFAULT_MCP_CONFIG.maxBatch))
})

export class McpConfig extends Context.Service<McpConfig, McpConfigShape>()("mcp/McpConfig") {
  static readonly fromEnv = Layer.effect(McpConfig, mcpConfigFromEnv)
  static readonly make = (config: Partial<McpConfigShape> = {}) => Layer.succeed(McpConfig, { ...DEFAULT_MCP_CONFIG, ...config })
}
