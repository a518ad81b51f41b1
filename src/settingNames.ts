/**
 * Every SVC_* setting this package reads (the gateway, `npm run workspace` and the `svc` tool),
 * to tell a misspelt one at start: an SVC_* variable in the environment (or `.env`) that is none
 * of these is reported in a warning with the closest known name, and otherwise ignored.
 *
 * The settings themselves are declared with Effect Config in the module that uses each; this
 * list cannot be read off those declarations, so test/ops/settingNames.test.ts holds it to them:
 * it must equal the SVC_* names in src/, the names in `.env.example` and those in the README.
 */

export const KNOWN_SETTINGS: ReadonlyArray<string> = [
  "SVC_ACTOR",
  "SVC_ACTOR_HEADER",
  "SVC_ACTOR_REQUIRED",
  "SVC_ADMIN_HOST",
  "SVC_ADMIN_PORT",
  "SVC_ADMIN_TOKEN",
  "SVC_ADMIN_URL",
  "SVC_AGENT_KEY",
  "SVC_BODY_BUDGET_WAIT_MS",
  "SVC_CLIENT_ADDRESS_HEADER",
  "SVC_CORS_CREDENTIALS",
  "SVC_CORS_ORIGINS",
  "SVC_DATABASE_URL",
  "SVC_DB_BUSY_TIMEOUT_MS",
  "SVC_DB_CHECKPOINT_INTERVAL_MS",
  "SVC_DB_CONNECT_TIMEOUT_MS",
  "SVC_DB_POOL_SIZE",
  "SVC_DB_STATEMENT_TIMEOUT_MS",
  "SVC_DB_WAL_LIMIT_BYTES",
  "SVC_EVENTS_KEEPALIVE_MS",
  "SVC_EVENTS_PAGE_BYTES",
  "SVC_EVENTS_POLL_MS",
  "SVC_EVENTS_STREAM_STALL_MS",
  "SVC_EVENT_STREAMS_MAX",
  "SVC_EVENT_STREAMS_PER_CLIENT",
  "SVC_FIRST_BYTE_TIMEOUT_MS",
  "SVC_GL_SESSION_TTL_MS",
  "SVC_GROUPS_HEADER",
  "SVC_HEADERS_TIMEOUT_MS",
  "SVC_INGEST_CONNECT_TIMEOUT_MS",
  "SVC_INGEST_FETCHES_AT_ONCE",
  "SVC_INGEST_MAX_BYTES",
  "SVC_INGEST_MAX_REDIRECTS",
  "SVC_INGEST_TIMEOUT_MS",
  "SVC_INGEST_URL_ALLOW",
  "SVC_INTERNAL_EVENTS_KEY",
  "SVC_JWT_ACTOR_CLAIM",
  "SVC_JWT_AUDIENCE",
  "SVC_JWT_GROUPS_CLAIM",
  "SVC_JWT_ISSUER",
  "SVC_JWT_JWKS",
  "SVC_JWT_JWKS_COOLDOWN_MS",
  "SVC_JWT_JWKS_TIMEOUT_MS",
  "SVC_JWT_MAX_AGE",
  "SVC_JWT_TENANT_CLAIM",
  "SVC_KEEP_ALIVE_TIMEOUT_MS",
  "SVC_LINK_SIGNING_KEYS",
  "SVC_LOCAL_INGEST_ROOT",
  "SVC_LOG_FORMAT",
  "SVC_LOG_LEVEL",
  "SVC_MAX_BODY_BYTES",
  "SVC_MAX_BODY_BYTES_IN_FLIGHT",
  "SVC_MAX_BODY_BYTES_PER_CLIENT",
  "SVC_MAX_CONNECTIONS",
  "SVC_MAX_CONNECTIONS_PER_CLIENT",
  "SVC_MAX_HEADERS",
  "SVC_MAX_JSON_DEPTH",
  "SVC_MCP_AUTH_FAILURE_BURST",
  "SVC_MCP_AUTH_FAILURE_REFILL_MS",
  "SVC_MCP_MAX_BATCH",
  "SVC_MCP_READ_MAX_BYTES",
  "SVC_METRICS_TOKEN",
  "SVC_MIN_BODY_BYTES_PER_SECOND",
  "SVC_NEXT_STEP_CONCURRENCY",
  "SVC_PUBLIC_URL",
  "SVC_REQUEST_DEADLINE_MS",
  "SVC_REQUEST_TIMEOUT_MS",
  "SVC_RUNBOOK_CONCURRENCY",
  "SVC_SEED_FILE",
  "SVC_SHUTDOWN_GRACE_MS",
  "SVC_SIGNAL_AWAIT_MS",
  "SVC_SIGNAL_BATCH_SIZE",
  "SVC_SIGNAL_CONCURRENCY",
  "SVC_SIGNAL_LEASE_MS",
  "SVC_TENANT_SLUG",
  "SVC_TOKEN",
  "SVC_TRACING",
  "SVC_TRUSTED_PROXY_HOPS",
  "SVC_URL",
  "SVC_WEBHOOK_CONCURRENCY",
  "SVC_WEBHOOK_DISABLE_AFTER_MS",
  "SVC_WEBHOOK_RETRY_SCHEDULE",
  "SVC_WEBHOOK_TIMEOUT_MS",
  "SVC_WEBHOOK_URL_ALLOW",
  "SVC_WORKSPACE_PORT",
  "SVC_WORKSPACE_RETRIES",
  "SVC_WORKSPACE_TIMEOUT_MS",
  "SVC_WORKSPACE_TOKEN",
  "SVC_WORKSPACE_URL",
]

const known = new Set(KNOWN_SETTINGS)

/** Edits (insert, delete, substitute a character) from `a` to `b`, ignoring case. */
const editDistance = (a: string, b: string): number => {
  const s = a.toLowerCase()
  const t = b.toLowerCase()
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j)
  for (let i = 1; i <= s.length; i++) {
    const current = [i]
    for (let j = 1; j <= t.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (s[i - 1] === t[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[t.length]!
}

/** The known name closest to `name` (fewest edits) and how far it is. */
export const closestSetting = (name: string): { readonly name: string; readonly distance: number } => {
  let best = { name: KNOWN_SETTINGS[0]!, distance: Number.POSITIVE_INFINITY }
  for (const candidate of KNOWN_SETTINGS) {
    const distance = editDistance(name, candidate)
    if (distance < best.distance) best = { name: candidate, distance }
  }
  return best
}

/** Settings of the gateway without the SVC_ prefix, which SVC_PORT / SVC_HOST most likely mean. */
const UNPREFIXED = new Set(["PORT", "HOST"])

/**
 * One warning per SVC_* name in `env` that is not a setting, naming the closest one. The prefix is
 * matched in any case: the environment is case-sensitive, so `svc_tenant_slug` is ignored too.
 */
export const unknownSettingWarnings = (env: Record<string, string | undefined> = process.env): Array<string> =>
  Object.keys(env)
    .filter((name) => name.toUpperCase().startsWith("SVC_") && !known.has(name))
    .sort()
    .map((name) => {
      const upper = name.toUpperCase()
      const bare = upper.slice("SVC_".length)
      let hint: string
      if (upper !== name && known.has(upper)) hint = `did you mean ${upper}? (names are case-sensitive)`
      else if (UNPREFIXED.has(bare)) hint = `did you mean ${bare}? (HOST and PORT have no SVC_ prefix)`
      else {
        const closest = closestSetting(upper)
        // A few edits away is a likely typo; farther, still the nearest name, said less surely.
        hint = closest.distance <= Math.max(2, Math.floor(name.length / 4))
          ? `did you mean ${closest.name}?`
          : `the closest is ${closest.name}; every setting is in .env.example`
      }
      return `${name} is not a setting of this gateway and is ignored: ${hint}`
    })
