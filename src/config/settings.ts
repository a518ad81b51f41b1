/**
 * Every setting the package reads, declared once: its name, type, default, bounds, what it does
 * and which process reads it. The Config readers take their defaults and bounds from here
 * (`./read.ts`), the unknown-setting warning its list of names (`./unknownSettings.ts`), and
 * `npm run settings:gen` writes `.env.example` and the README's settings tables from it
 * (test/ops/settingNames.test.ts fails when the committed files differ).
 *
 * Adding a setting: one entry below (in the section it belongs to), read with the helpers of
 * `./read.ts` or `setting(name)`, then `npm run settings:gen`.
 */

/** The processes of this package: the gateway, `npm run workspace`, `svc`, `svc mcp`. */
export type Reader = "gateway" | "workspace" | "cli" | "mcp"

export type SettingType =
  | "integer"
  | "port"
  | "boolean"
  | "text"
  | "url"
  | "url or file"
  | "header name"
  | "list"
  | "choice"
  | "secret"

/** The README's settings tables, each generated between markers naming it. */
export type DocsTable = "main" | "ingest" | "postgres" | "mcp" | "operations"

/** A setting's row in a README table. */
export interface SettingDocs {
  readonly table: DocsTable
  /** The Default column, as a reader wants it (`32 MiB`, `unset (embedded)`). */
  readonly default: string
  /** The Meaning column; absent when the row is shared (`with`). */
  readonly meaning?: string
  /** Shown in the row of this other setting (names and defaults joined), which holds the meaning. */
  readonly with?: string
}

export interface SettingDeclaration {
  readonly name: string
  readonly type: SettingType
  /** Unset: no default (the setting is off, or follows another, as its description says). */
  readonly default?: number | string | boolean
  /** Bounds of an integer, inclusive. */
  readonly min?: number
  readonly max?: number
  readonly choices?: ReadonlyArray<string>
  readonly readBy: ReadonlyArray<Reader>
  readonly section: keyof typeof SECTIONS
  /** The values `.env.example` shows, where not the default (or nothing). */
  readonly example?: ReadonlyArray<string>
  /** `.env.example` prints no comment for it: the comment of the one above covers both. */
  readonly envShared?: boolean
  /** What it does, for `.env.example`. */
  readonly description: string
  readonly docs?: SettingDocs | ReadonlyArray<SettingDocs>
}

/** The largest delay a Node timer takes (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2_147_483_647

/** `.env.example`'s sections, in order, by their titles. */
export const SECTIONS = {
  tenant: "Tenant binding",
  identity: "Identity: who acts (README \"Identity: who acts\"); both off by default",
  server: "HTTP server",
  upstream: "Upstream workspace",
  admin: "Admin listener (embedded mode)",
  embedded: "Embedded workspace",
  ingest: "File ingest providers",
  webhooks: "Outbound webhooks (README \"Outbound webhooks\")",
  mcp: "Agent tool server (/mcp)",
  shutdown: "Shutdown",
  observability: "Logs, metrics, traces, CORS",
  streams: "Live event streams (GET /v1/tasks/:taskId/events/stream)",
}

const DECLARATIONS = [
  {
    name: "SVC_TENANT_SLUG",
    type: "text",
    readBy: ["gateway"],
    section: "tenant",
    example: ["acme"],
    description:
      "The one tenant this process serves. Unset: in embedded mode the demo tenant (\"acme\") is bound and the startup log says so; with SVC_WORKSPACE_URL every /v1 endpoint but health answers 503.",
    docs: { table: "main", default: "demo tenant in embedded mode", meaning:
        "the tenant this process serves" },
  },
  {
    name: "SVC_INTERNAL_EVENTS_KEY",
    type: "secret",
    readBy: ["gateway"],
    section: "tenant",
    description:
      "When set, POST /v1/tasks/:taskId/events needs header x-svc-events-key with this value (401 otherwise).",
    docs: { table: "main", default: "unset", meaning:
        "required `x-svc-events-key` on `POST /v1/tasks/:taskId/events` (401 otherwise)" },
  },
  {
    name: "SVC_ACTOR_HEADER",
    type: "header name",
    readBy: ["gateway", "cli"],
    section: "identity",
    description:
      "A header the authenticating proxy in front sets to the actor (e.g. x-forwarded-email). Malformed values answer 400; writes without it answer 401 unless SVC_ACTOR_REQUIRED=false.",
    docs: { table: "main", default: "unset", meaning:
        "the header the authenticating proxy names the actor in; writes without it answer 401 unless `SVC_ACTOR_REQUIRED=false` ([Identity](#identity-who-acts))" },
  },
  {
    name: "SVC_ACTOR_REQUIRED",
    type: "boolean",
    default: true,
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "With SVC_ACTOR_HEADER: whether writes without the header answer 401.",
    docs: { table: "main", default: "`true`", with: "SVC_ACTOR_HEADER" },
  },
  {
    name: "SVC_GROUPS_HEADER",
    type: "header name",
    readBy: ["gateway"],
    section: "identity",
    description:
      "With the actor header: a header naming the actor's groups, a comma list (e.g. oauth2-proxy's x-forwarded-groups); a runbook step's assignees may name them as group:<name>. A repeated actor or groups header answers 400.",
    docs: { table: "main", default: "unset", meaning:
        "the actor's groups from the edge (a comma-list header with `SVC_ACTOR_HEADER`, or a JWT claim), for step assignees `group:<name>` ([Inbox and assignment](#inbox-and-assignment))" },
  },
  {
    name: "SVC_JWT_JWKS",
    type: "url or file",
    readBy: ["gateway"],
    section: "identity",
    description:
      "Bearer JWTs: every /v1 request but health needs one, verified against this JWKS (an https URL or a file path; plain http only to a loopback address); issuer and audience (comma list) are then required. The actor is the claim SVC_JWT_ACTOR_CLAIM; with SVC_JWT_TENANT_CLAIM, a token of another tenant answers 403. With both ways set, the token wins and the header is not read.",
    docs: { table: "main", default: "unset", meaning:
        "every `/v1` request but health needs a bearer JWT verified against these keys (an https URL, a file, or http on a loopback address only); the actor is the claim ([Identity](#identity-who-acts))" },
  },
  {
    name: "SVC_JWT_ISSUER",
    type: "text",
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "With SVC_JWT_JWKS (required): the issuer (iss) every token must name.",
    docs: { table: "main", default: "-", with: "SVC_JWT_JWKS" },
  },
  {
    name: "SVC_JWT_AUDIENCE",
    type: "list",
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "With SVC_JWT_JWKS (required): the audience (aud) a token must name, a comma list for several.",
    docs: { table: "main", default: "-", with: "SVC_JWT_JWKS" },
  },
  {
    name: "SVC_JWT_ACTOR_CLAIM",
    type: "text",
    default: "sub",
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "The claim naming the actor.",
    docs: { table: "main", default: "`sub`", with: "SVC_JWT_JWKS" },
  },
  {
    name: "SVC_JWT_TENANT_CLAIM",
    type: "text",
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "The claim naming the tenant: a token of another tenant answers 403.",
    docs: { table: "main", default: "unset", with: "SVC_JWT_JWKS" },
  },
  {
    name: "SVC_JWT_GROUPS_CLAIM",
    type: "text",
    readBy: ["gateway"],
    section: "identity",
    description:
      "The claim naming the actor's groups (an array of strings or a comma list), for step assignees group:<name>.",
    docs: { table: "main", default: "unset", with: "SVC_GROUPS_HEADER" },
  },
  {
    name: "SVC_JWT_JWKS_TIMEOUT_MS",
    type: "integer",
    default: 5000,
    min: 1,
    readBy: ["gateway"],
    section: "identity",
    description:
      "A key-set fetch is abandoned after this long; an unknown key id reloads the set at most once per cooldown.",
    docs: { table: "main", default: "5000", meaning:
        "a key-set fetch is abandoned after this long; least time between two reloads caused by an unknown key id" },
  },
  {
    name: "SVC_JWT_JWKS_COOLDOWN_MS",
    type: "integer",
    default: 30_000,
    min: 0,
    readBy: ["gateway"],
    section: "identity",
    envShared: true,
    description:
      "Least time between two key-set reloads caused by an unknown key id.",
    docs: { table: "main", default: "30000", with: "SVC_JWT_JWKS_TIMEOUT_MS" },
  },
  {
    name: "SVC_JWT_MAX_AGE",
    type: "integer",
    default: 86_400,
    min: 1,
    readBy: ["gateway"],
    section: "identity",
    description:
      "Seconds: the longest a token may be minted for (exp - iat, or exp - now without iat); longer: 401.",
    docs: { table: "main", default: "86400", meaning:
        "seconds: the longest a token may be minted for (`exp` - `iat`, or `exp` - now without `iat`); longer, or `iat` in the future: 401" },
  },
  {
    name: "SVC_ACTOR",
    type: "text",
    readBy: ["cli"],
    section: "identity",
    description:
      "`svc`: the actor it names (in the SVC_ACTOR_HEADER header) and a bearer token it sends.",
    docs: { table: "main", default: "unset", meaning:
        "`svc`: the actor it names to the gateway, in the `SVC_ACTOR_HEADER` header (`--actor` overrides it)" },
  },
  {
    name: "SVC_TOKEN",
    type: "secret",
    readBy: ["cli"],
    section: "identity",
    envShared: true,
    description:
      "`svc`: a bearer token it sends (a gateway with SVC_JWT_JWKS).",
    docs: { table: "main", default: "unset", meaning:
        "`svc`: a bearer token it sends, for a gateway with `SVC_JWT_JWKS`; environment only" },
  },
  {
    name: "SVC_URL",
    type: "url",
    default: "http://127.0.0.1:3000",
    readBy: ["cli", "mcp"],
    section: "identity",
    description:
      "`svc`: the gateway it talks to and the admin listener (agent registry) it uses.",
    docs: { table: "main", default: "`http://127.0.0.1:3000`", meaning:
        "`svc` and `svc mcp`: the gateway they talk to (`--url` overrides it)" },
  },
  {
    name: "SVC_ADMIN_URL",
    type: "url",
    default: "http://127.0.0.1:3001",
    readBy: ["cli"],
    section: "identity",
    envShared: true,
    description:
      "`svc`: the admin listener (agent registry) it uses.",
    docs: { table: "main", default: "`http://127.0.0.1:3001`", meaning:
        "`svc`: the admin listener it reaches the agent registry and decision links on (`--admin-url` overrides it)" },
  },
  {
    name: "HOST",
    type: "text",
    default: "127.0.0.1",
    readBy: ["gateway", "workspace"],
    section: "server",
    envShared: true,
    description:
      "Where the gateway listens (and `npm run workspace`).",
    docs: { table: "main", default: "`127.0.0.1`", meaning:
        "where the gateway listens" },
  },
  {
    name: "PORT",
    type: "port",
    default: 3000,
    readBy: ["gateway"],
    section: "server",
    envShared: true,
    description:
      "The gateway's port.",
    docs: { table: "main", default: "`3000`", with: "HOST" },
  },
  {
    name: "SVC_MAX_BODY_BYTES",
    type: "integer",
    default: 33_554_432,
    min: 1,
    // 511 MiB. A JSON body is read whole into memory and made one string before it is parsed
    // (src/http/input/jsonInput.ts), and V8's longest string is 2^29 - 24 characters (just under
    // 512 MiB): past it the parse throws and the request would end in a 500. A raw upload is
    // spooled to disk and stored in chunks or a file, so it could be larger, but one cap serves
    // both. A MiB under the string limit keeps the figure round and the margin obvious.
    max: 511 * 1024 * 1024,
    readBy: ["gateway"],
    section: "server",
    description:
      "Request bodies over this many bytes answer 413 (Content-Length checked before reading; chunked capped). At most 511 MiB (a JSON body is held as one string, and V8's longest is just under 512 MiB).",
    docs: { table: "main", default: "32 MiB", meaning:
        "larger bodies answer 413; at most 511 MiB (a JSON body is held as one string, and V8's longest is just under 512 MiB)" },
  },
  {
    name: "SVC_MAX_JSON_DEPTH",
    type: "integer",
    default: 64,
    min: 1,
    readBy: ["gateway"],
    section: "server",
    description:
      "JSON bodies nested deeper than this many levels answer 400 (the body itself is level 1).",
    docs: { table: "main", default: "64", meaning:
        "JSON bodies nested deeper answer 400 naming the limit" },
  },
  {
    name: "SVC_MAX_JSON_ITEMS",
    type: "integer",
    default: 1_000_000,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "JSON bodies holding more items than this (values, i.e. objects, arrays, strings, numbers and literals, and object keys; a key written with an escape counts 8) answer 413 before they are parsed: a parse holds the whole process, and a million empty objects take about 0.6 s. The workspace service takes 64 more (what the gateway forwards wraps a client's body).",
    docs: { table: "main", default: "1000000", meaning:
        "JSON bodies holding more items (values and object keys; a key written with an escape counts 8) answer 413 before they are parsed: a parse holds the whole process, and 5 million small objects (14 MiB) held it for 2-3 s; 10,000 ingest rows of 30 fields are 610,001 items. `npm run workspace` and the admin listener read it too (64 more, for what the gateway wraps around a client's body)" },
  },
  {
    name: "SVC_HEADERS_TIMEOUT_MS",
    type: "integer",
    default: 10_000,
    min: 1,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Time to receive a request's headers, and the whole request (body included): 408 and close past them. Set one alone and the other follows it where needed (a request timeout of 4000 alone makes the header timeout 4000 too); set both and the header timeout must not exceed the request timeout.",
    docs: { table: "main", default: "10000, or `SVC_REQUEST_TIMEOUT_MS` when that is set lower", meaning:
        "time to send the request headers; 408 and close past it; set both and it must not exceed `SVC_REQUEST_TIMEOUT_MS`" },
  },
  {
    name: "SVC_REQUEST_TIMEOUT_MS",
    type: "integer",
    default: 60_000,
    min: 1,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "server",
    envShared: true,
    description:
      "Time to receive the whole request, body included: 408 and close past it.",
    docs: { table: "main", default: "60000, or `SVC_HEADERS_TIMEOUT_MS` when that is set higher", meaning:
        "time to send the whole request, body included (raise for large uploads over slow links: 32 MiB in 60 s needs ~0.55 MB/s)" },
  },
  {
    name: "SVC_FIRST_BYTE_TIMEOUT_MS",
    type: "integer",
    default: 2000,
    min: 1,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "A connection that sends no byte this long after it opened is closed (at most the header timeout).",
    docs: { table: "main", default: "2000, or the header timeout when lower", meaning:
        "a connection that sends no byte this long after it opened is closed: silent sockets cannot hold the connection cap for the whole header timeout" },
  },
  {
    name: "SVC_KEEP_ALIVE_TIMEOUT_MS",
    type: "integer",
    default: 5000,
    min: 1,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "How long an idle keep-alive connection stays open (behind a pooling proxy: above its idle timeout). One that sends bytes but begins no request (empty lines) is closed after this plus the header timeout.",
    docs: { table: "main", default: "5000", meaning:
        "idle keep-alive connections are closed after this; one that sends bytes but begins no request (empty lines, which may precede a request) after this plus the header timeout" },
  },
  {
    name: "SVC_MAX_HEADERS",
    type: "integer",
    default: 100,
    min: 1,
    max: 10_000,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Request headers allowed (431 above); open connections allowed (more are closed at once, but 16 more are kept for GET /v1/health and /readyz: probes are answered while the cap is full).",
    docs: { table: "main", default: "100", meaning:
        "more request headers answer 431" },
  },
  {
    name: "SVC_MAX_CONNECTIONS",
    type: "integer",
    default: 1024,
    min: 1,
    max: 1_000_000,
    readBy: ["gateway", "workspace"],
    section: "server",
    envShared: true,
    description:
      "Open connections allowed (more are closed at once; 16 more are kept for the probes).",
    docs: { table: "main", default: "1024", meaning:
        "connections past this are closed as soon as accepted, but 16 more are kept for the probes: on them `GET /v1/health` and `/readyz` are answered (then the connection closes) and anything else gets 503 with `Retry-After: 1`, so liveness and readiness stay answerable while a flood holds the cap" },
  },
  {
    name: "SVC_MAX_CONNECTIONS_PER_CLIENT",
    type: "integer",
    default: 256,
    min: 1,
    max: 1_000_000,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Open connections from one client address (an IPv6 /64) allowed; past it its new connections are closed at once, other clients still served. Behind a reverse proxy every connection comes from the proxy's address: set it to SVC_MAX_CONNECTIONS there.",
    docs: { table: "main", default: "256", meaning:
        "connections from one client address (IPv6: its /64) past this are closed as soon as accepted; behind a reverse proxy (one address) set it to `SVC_MAX_CONNECTIONS`" },
  },
  {
    name: "SVC_MAX_BODY_BYTES_IN_FLIGHT",
    type: "integer",
    default: 134_217_728,
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Request body bytes held at once across all requests (128 MiB); a body is held until its answer is sent and costs about 3x its size meanwhile. A declared body that does not fit waits up to SVC_BODY_BUDGET_WAIT_MS for room, then answers 503 with Retry-After (a chunked one at once). A body up to 64 KiB (an ordinary API call) never waits.",
    docs: { table: "main", default: "128 MiB", meaning:
        "request body bytes held at once across requests (declared lengths reserved up front, chunked bodies counted as they arrive); a body that does not fit waits up to the wait, then answers 503 with `Retry-After: 1`; bodies up to 64 KiB never wait" },
  },
  {
    name: "SVC_BODY_BUDGET_WAIT_MS",
    type: "integer",
    default: 2000,
    min: 0,
    max: 60_000,
    readBy: ["gateway", "workspace"],
    section: "server",
    envShared: true,
    description:
      "How long a declared body that does not fit the budget waits for room before 503.",
    docs: { table: "main", default: "2000", with: "SVC_MAX_BODY_BYTES_IN_FLIGHT" },
  },
  {
    name: "SVC_MAX_BODY_BYTES_PER_CLIENT",
    type: "integer",
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "What one client (its address; behind proxies the SVC_CLIENT_ADDRESS_HEADER entry) may hold of that budget; its first body is always let in. Unset: a quarter of SVC_MAX_BODY_BYTES_IN_FLIGHT.",
    docs: { table: "main", default: "a quarter of `SVC_MAX_BODY_BYTES_IN_FLIGHT`", meaning:
        "what one client may hold of that budget (its address; behind proxies the `SVC_CLIENT_ADDRESS_HEADER` entry, [Agent tool server](#agent-tool-server-mcp)); its first body always gets in; past it, it waits for its own bodies like any other, holding up nobody else" },
  },
  {
    name: "SVC_MIN_BODY_BYTES_PER_SECOND",
    type: "integer",
    default: 16_384,
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "A body over 64 KiB arriving slower than this (bytes/s over 5 s) is cut with 408; 0 = never.",
    docs: { table: "main", default: "16384", meaning:
        "a body over 64 KiB arriving slower than this over 5 s (from 5 s after it was admitted) is cut: 408, connection closed, its share of the budget given back at once; 0 = never" },
  },
  {
    name: "SVC_IDLE_COLLECT_MS",
    type: "integer",
    default: 10_000,
    // A full collection holds the loop for milliseconds: not after every short pause in traffic.
    min: 1000,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Under npm start (--expose-gc), one memory-reducing garbage collection once the server has had no request this long (probes of /v1/health and /readyz do not count): a burst's memory given back without V8's memory reducer.",
    docs: { table: "main", default: "10000", meaning:
        "under `npm start`, one memory-reducing garbage collection once no request has come for this long, probes of `/v1/health` and `/readyz` not counted (a burst's memory given back)" },
  },
  {
    name: "SVC_NEXT_STEP_CONCURRENCY",
    type: "integer",
    default: 50,
    min: 1,
    readBy: ["gateway"],
    section: "server",
    description:
      "Upstream task-list lookups the agent tool list_assigned_steps runs at once (the task list makes one batch call), and runbook lookups one workflow list runs at once.",
    docs: { table: "main", default: "50", meaning:
        "upstream task lookups the agent tool `list_assigned_steps` runs at once; runbook lookups one workflow list runs at once" },
  },
  {
    name: "SVC_RUNBOOK_CONCURRENCY",
    type: "integer",
    default: 8,
    min: 1,
    readBy: ["gateway"],
    section: "server",
    envShared: true,
    description:
      "Runbook lookups one workflow list runs at once.",
    docs: { table: "main", default: "8", with: "SVC_NEXT_STEP_CONCURRENCY" },
  },
  {
    name: "SVC_TRACING",
    type: "boolean",
    readBy: ["gateway"],
    section: "server",
    example: ["false"],
    description:
      "A tracing span per request (costs throughput); default true when OTEL_EXPORTER_OTLP_* is set, else false.",
    docs: { table: "operations", default: "false, or true when `OTEL_EXPORTER_OTLP_ENDPOINT` is set", meaning:
        "a tracing span per request (costs throughput)" },
  },
  {
    name: "SVC_PUBLIC_URL",
    type: "url",
    readBy: ["gateway", "workspace"],
    section: "server",
    example: ["http://127.0.0.1:3000"],
    description:
      "Base URL this process is reached at (links it hands out, e.g. the GL connect page): http or https, with no credentials, query or fragment. Decision links (svc links create) are made, and task.waiting webhooks carry the task's console URL, only when it is set here: people open them from messages.",
    docs: { table: "main", default: "`http://HOST:PORT`", meaning:
        "the base URL this process is reached at (http or https, no query or fragment), for the links it hands out (the GL connect page); [decision links](#decision-links-approve-or-reject-from-a-message) are made, and `task.waiting` webhooks carry the task's console URL, only when it is set" },
  },
  {
    name: "SVC_LINK_SIGNING_KEYS",
    type: "secret",
    readBy: ["gateway", "workspace"],
    section: "server",
    description:
      "Keys that sign decision links, comma-separated, each at least 32 characters: the first signs, every one verifies (rotate: put a new key first; drop the old once its links have expired). Unset: a key generated once into the database. Never logged.",
    docs: { table: "main", default: "unset (a key generated once into the database)", meaning:
        "keys that sign decision links, comma-separated, each at least 32 characters: the first signs, all verify (rotation); never logged" },
  },
  {
    name: "SVC_WORKSPACE_URL",
    type: "url",
    readBy: ["gateway"],
    section: "upstream",
    description:
      "Set to reach your own workspace service over HTTP (it implements docs/workspace-openapi.json): http or https, with no credentials (SVC_WORKSPACE_TOKEN carries the token), query or fragment. Unset: the embedded workspace runs in this process on a local SQLite file.",
    docs: { table: "main", default: "unset (embedded)", meaning:
        "your workspace service implementing [`docs/workspace-openapi.json`](docs/workspace-openapi.json)" },
  },
  {
    name: "SVC_REQUEST_DEADLINE_MS",
    type: "integer",
    default: 15_000,
    min: 1,
    readBy: ["gateway"],
    section: "upstream",
    description:
      "One deadline per request, counted once its body has been received: every call to the workspace service, every retry and backoff fits inside it. A 504 means it passed (and only that); a refused connection is a 503 at once. Worst case for any request: this long after its body arrived.",
    docs: { table: "main", default: "15000", meaning:
        "one deadline per request, counted once its body has arrived: every workspace call, retry and backoff fits inside it; a 504 means it passed" },
  },
  {
    name: "SVC_WORKSPACE_TIMEOUT_MS",
    type: "integer",
    default: 10_000,
    min: 1,
    readBy: ["gateway"],
    section: "upstream",
    description:
      "An attempt unanswered after this long is abandoned and retried (the last one may use the rest of the deadline). Retries of every call, writes included (each carries an idempotency key), with jittered exponential backoff (100 ms, 200 ms, ...).",
    docs: { table: "main", default: "10000", meaning:
        "with `SVC_WORKSPACE_URL`: an attempt unanswered after this long is abandoned and retried (the last may use the rest of the deadline)" },
  },
  {
    name: "SVC_WORKSPACE_RETRIES",
    type: "integer",
    default: 2,
    min: 0,
    readBy: ["gateway"],
    section: "upstream",
    envShared: true,
    description:
      "Retries of a failed or timed-out workspace call over HTTP.",
    docs: { table: "main", default: "2", meaning:
        "with `SVC_WORKSPACE_URL`: retries of every call, writes included (each carries an idempotency key), with jittered exponential backoff" },
  },
  {
    name: "SVC_WORKSPACE_MAX_CONNECTIONS",
    type: "integer",
    default: 192,
    min: 3,
    // 4096: sixteen times the workspace service's own per-client cap (SVC_MAX_CONNECTIONS_PER_CLIENT,
    // 256), past which it closes a connection as soon as it accepts it. Even a service raised to
    // take more meets every connection as a descriptor on both ends; a figure past this is a slip
    // (a byte count in the wrong setting), not a plan, and would leave calls refused and retried
    // instead of waiting for a free connection.
    max: 4096,
    readBy: ["gateway"],
    section: "upstream",
    description:
      "Connections the gateway keeps to the workspace service at most; a call past them waits for a free one (inside its deadline) instead of a connection the service would refuse past its SVC_MAX_CONNECTIONS_PER_CLIENT (256). Downloads use at most a third of them, so long downloads never hold every connection, and one is kept for the tenant lookup (/readyz). At most 4096.",
    docs: { table: "main", default: "192", meaning:
        "with `SVC_WORKSPACE_URL`: connections to the workspace service at most (downloads at most a third of them, one kept for the tenant lookup `/readyz` makes); more calls wait for a free one. Keep it below the service's `SVC_MAX_CONNECTIONS_PER_CLIENT` (256) summed over every gateway behind one address; at most 4096" },
  },
  {
    name: "SVC_WORKSPACE_TOKEN",
    type: "secret",
    readBy: ["gateway"],
    section: "upstream",
    description:
      "With SVC_WORKSPACE_URL: bearer token sent to that workspace service (its SVC_ADMIN_TOKEN).",
    docs: { table: "main", default: "unset", meaning:
        "bearer token the gateway sends to `SVC_WORKSPACE_URL` (that service's `SVC_ADMIN_TOKEN`)" },
  },
  {
    name: "SVC_WORKSPACE_PORT",
    type: "port",
    default: 4000,
    readBy: ["workspace"],
    section: "upstream",
    description:
      "`npm run workspace` (the workspace service as a process of its own) listens on this port.",
    docs: { table: "main", default: "4000", meaning:
        "the port `npm run workspace` (the workspace service as a process of its own) listens on" },
  },
  {
    name: "SVC_ADMIN_HOST",
    type: "text",
    default: "127.0.0.1",
    readBy: ["gateway"],
    section: "admin",
    description:
      "Every tenant's workspace API (records, agent registry, GL webhook, /workspace/docs and /workspace/openapi.json) is served only here, never on PORT.",
    docs: { table: "main", default: "`127.0.0.1`", meaning:
        "embedded mode's admin listener: every tenant's workspace API and the agent registry; port `0` = a free port, `off` = none; replicas on one host: [Scaling out](#scaling-out-several-replicas-on-postgresql)" },
  },
  {
    name: "SVC_ADMIN_PORT",
    type: "port",
    readBy: ["gateway"],
    section: "admin",
    example: ["3001"],
    description:
      "A port; 0 picks a free one (the start-up log names it); off runs no admin listener. Unset: the gateway's PORT + 1 (3001), so replicas on one host with PORTs two apart do not collide.",
    docs: { table: "main", default: "`PORT` + 1 (3001)", with: "SVC_ADMIN_HOST" },
  },
  {
    name: "SVC_ADMIN_TOKEN",
    type: "secret",
    readBy: ["gateway", "workspace", "cli"],
    section: "admin",
    description:
      "When set (16+ visible ASCII characters), every admin request needs Authorization: Bearer <token> (401 otherwise). Required when SVC_ADMIN_HOST is not loopback, and with SVC_ACTOR_HEADER or SVC_JWT_JWKS (or set SVC_ADMIN_PORT=off). `npm run workspace` checks it too.",
    docs: { table: "main", default: "unset", meaning:
        "bearer token every admin request needs (401 otherwise); required off loopback, and with `SVC_ACTOR_HEADER` or `SVC_JWT_JWKS` (else the admin listener would be a way around them: set it, or `SVC_ADMIN_PORT=off`); `npm run workspace` checks it too" },
  },
  {
    name: "SVC_DATABASE_URL",
    type: "text",
    default: "file:./data/workspace.db",
    readBy: ["gateway", "workspace"],
    section: "embedded",
    example: ["file:./data/workspace.db", "postgres://user:password@host:5432/database"],
    description:
      "SQLite database file (a file: URL); its directory is created. Or a postgres:// URL: several replicas share one PostgreSQL database (README \"Scaling out\").",
    docs: { table: "main", default: "`file:./data/workspace.db`", meaning:
        "the embedded workspace's SQLite file, or a `postgres://` URL shared by several replicas ([Scaling out](#scaling-out-several-replicas-on-postgresql))" },
  },
  {
    name: "SVC_DB_POOL_SIZE",
    type: "integer",
    default: 10,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "PostgreSQL only: connections per replica, statement timeout (0 = none), connect timeout, and how long a replica's claim on pending signals holds before another replica may take them over.",
    docs: { table: "postgres", default: "10", meaning:
        "connections for queries per replica; two more LISTEN for the signal relay and the webhook deliveries (keep replicas x (pool + 2) below the server's `max_connections`)" },
  },
  {
    name: "SVC_DB_STATEMENT_TIMEOUT_MS",
    type: "integer",
    default: 30_000,
    min: 0,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    envShared: true,
    description:
      "PostgreSQL: a longer statement is cancelled (0 = none).",
    docs: { table: "postgres", default: "30000", meaning:
        "a longer statement is cancelled and answers 503; 0 = no limit" },
  },
  {
    name: "SVC_DB_CONNECT_TIMEOUT_MS",
    type: "integer",
    default: 5000,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    envShared: true,
    description:
      "PostgreSQL: how long opening a connection may take.",
    docs: { table: "postgres", default: "5000", meaning:
        "how long opening a connection may take (at start: the start fails, naming it)" },
  },
  {
    name: "SVC_SIGNAL_LEASE_MS",
    type: "integer",
    default: 30_000,
    min: 100,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    envShared: true,
    description:
      "PostgreSQL: how long a replica's claim on pending signals holds.",
    docs: { table: "postgres", default: "30000", meaning:
        "how long a replica's claim on signals holds before another may take them over" },
  },
  {
    name: "SVC_DECISION_SETTLE_MS",
    type: "integer",
    min: 0,
    max: 10_000,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "How long a decision (or a row action, or a file or data naming a step) waits after its arrival before it may move a task, so that requests written together with it count as together; unset: 100 on PostgreSQL and for a decision a gateway forwards to the workspace API (SVC_WORKSPACE_URL: gateways are replicas too), else 3 (README \"Decisions are bound to the step the client saw\").",
    docs: { table: "postgres", default: "100 (SQLite, one process: 3)", meaning:
        "how long after its arrival a decision waits before it may move a task: requests another replica reads within it count as written together with it (each answer takes that much longer)" },
  },
  {
    name: "SVC_SEED_FILE",
    type: "text",
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "A fixture (format: fixtures/README.md) loaded at every start with idempotent upserts. Unset: an empty database gets the demo fixture (fixtures/demo.json).",
    docs: { table: "main", default: "unset", meaning:
        "a fixture loaded at start (format: [`fixtures/README.md`](fixtures/README.md))" },
  },
  {
    name: "SVC_DB_BUSY_TIMEOUT_MS",
    type: "integer",
    default: 5000,
    min: 0,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "How long an operation waits for another process's write lock on the database file (the wait holds up no other request); then 503 with Retry-After. On PostgreSQL it bounds each wait for another transaction's lock (lock_timeout) and the retries of serialization failures, deadlocks and lost compare-and-sets.",
    docs: [{ table: "main", default: "5000", meaning:
        "how long an embedded-store write waits (holding up no other request) for another process's lock on the database file; then 503 with `Retry-After: 1`" }, { table: "postgres", default: "5000", meaning:
        "also each wait for another transaction's lock (`lock_timeout`: a replica frozen mid-write holds its task's row) and the retries of serialization failures, deadlocks and lost compare-and-sets" }],
  },
  {
    name: "SVC_DB_CHECKPOINT_INTERVAL_MS",
    type: "integer",
    default: 60_000,
    min: 0,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "Write-ahead log (SQLite): TRUNCATE checkpoint every this many ms (in a worker thread started on first need; 0 = only at exit), and the size past which it is truncated before the next write (also its journal_size_limit).",
    docs: { table: "main", default: "60000", meaning:
        "`wal_checkpoint(TRUNCATE)` on this schedule (in a worker thread once the log has needed one) and at every clean exit; 0 = only at exit" },
  },
  {
    name: "SVC_DB_WAL_LIMIT_BYTES",
    type: "integer",
    default: 67_108_864,
    min: 0,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    envShared: true,
    description:
      "SQLite: the size past which the write-ahead log is truncated before the next write.",
    docs: { table: "main", default: "67108864", meaning:
        "past this size the write-ahead log is truncated before the next write; also its `journal_size_limit`" },
  },
  {
    name: "SVC_SIGNAL_BATCH_SIZE",
    type: "integer",
    default: 200,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "Outbox relay: signals applied per transaction, and tasks delivered to at once.",
    docs: { table: "main", default: "200", meaning:
        "signals the outbox relay applies per transaction (one task's, in order)" },
  },
  {
    name: "SVC_SIGNAL_CONCURRENCY",
    type: "integer",
    default: 4,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    envShared: true,
    description:
      "Outbox relay: tasks delivered to at once.",
    docs: { table: "main", default: "4", meaning:
        "tasks the relay delivers to at once" },
  },
  {
    name: "SVC_SIGNAL_AWAIT_MS",
    type: "integer",
    default: 2000,
    min: 0,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "How long a write carrying a few signals (an approval, a file submission) waits for their delivery before answering; 0 answers at the commit (bulk ingests never wait).",
    docs: { table: "main", default: "2000", meaning:
        "how long a write carrying a few signals (at most 100) waits for their delivery before answering; 0 = answer at the commit" },
  },
  {
    name: "SVC_GL_SESSION_TTL_MS",
    type: "integer",
    default: 900_000,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "embedded",
    description:
      "How long a GL connect session can be completed after it was created (its page, its completion and the adapter's webhook); past it the session answers 404 as an unknown one. 15 minutes.",
    docs: { table: "main", default: "900000", meaning:
        "a GL connect session (`POST /v1/gl/connect/session`) older than this can no longer be opened or completed: its page, its completion and the adapter's webhook answer 404 as for an unknown session, and the GL stays as it was" },
  },
  {
    name: "SVC_LOCAL_INGEST_ROOT",
    type: "text",
    readBy: ["gateway"],
    section: "ingest",
    description:
      "Directory the `local` provider may read under; unset disables the provider.",
    docs: { table: "ingest", default: "unset (`local` off)", meaning:
        "directory `local` may read under" },
  },
  {
    name: "SVC_INGEST_MAX_BYTES",
    type: "integer",
    default: 52_428_800,
    min: 1,
    readBy: ["gateway"],
    section: "ingest",
    description:
      "Byte cap of one fetched file (local and url): 413 above it.",
    docs: { table: "ingest", default: "50 MiB", meaning:
        "cap of one fetched file (`local`, `url`): 413 above it" },
  },
  {
    name: "SVC_INGEST_FETCHES_AT_ONCE",
    type: "integer",
    default: 4,
    min: 1,
    readBy: ["gateway"],
    section: "ingest",
    description:
      "Ingests by url or local that fetch at once (their bytes are held until stored); more wait up to 10 s for a slot, then answer 503 with Retry-After.",
    docs: { table: "ingest", default: "4", meaning:
        "`local` and `url` ingests that fetch (and hold their bytes until stored) at once; more wait up to 10 s for a slot, then 503 with `Retry-After`. With `SVC_INGEST_MAX_BYTES` it bounds the memory fetched files take (4 x 50 MiB)" },
  },
  {
    name: "SVC_INGEST_URL_ALLOW",
    type: "list",
    readBy: ["gateway"],
    section: "ingest",
    description:
      "Comma list of host:port the `url` provider may reach although they are private.",
    docs: { table: "ingest", default: "empty", meaning:
        "comma list of `host:port` that `url` may reach although private (on-premises sources, tests)" },
  },
  {
    name: "SVC_INGEST_CONNECT_TIMEOUT_MS",
    type: "integer",
    default: 5000,
    min: 1,
    readBy: ["gateway"],
    section: "ingest",
    envShared: true,
    description:
      "DNS lookup and connect of a `url` fetch, per hop.",
    docs: { table: "ingest", default: "5000", meaning:
        "DNS lookup and connect, per hop" },
  },
  {
    name: "SVC_INGEST_TIMEOUT_MS",
    type: "integer",
    default: 30_000,
    min: 1,
    readBy: ["gateway"],
    section: "ingest",
    envShared: true,
    description:
      "The whole `url` fetch, redirects and body included.",
    docs: { table: "ingest", default: "30000", meaning:
        "the whole fetch, redirects and body included" },
  },
  {
    name: "SVC_INGEST_MAX_REDIRECTS",
    type: "integer",
    default: 3,
    min: 0,
    readBy: ["gateway"],
    section: "ingest",
    envShared: true,
    description:
      "Redirects a `url` fetch follows; one more is refused.",
    docs: { table: "ingest", default: "3", meaning:
        "redirects followed; one more is refused" },
  },
  {
    name: "SVC_WEBHOOK_RETRY_SCHEDULE",
    type: "list",
    default: "0,5s,5m,30m,2h,5h,10h,10h",
    readBy: ["gateway", "workspace"],
    section: "webhooks",
    description:
      "Delay before each attempt: the first after the event, each next after a failure (ms, s, m, h, d); past the last the delivery has failed. Svix's schedule.",
    docs: { table: "main", default: "`0,5s,5m,30m,2h,5h,10h,10h`", meaning:
        "delay before each webhook attempt (the first after the event, each next after a failure; `ms`, `s`, `m`, `h`, `d`); past the last the delivery has failed ([Outbound webhooks](#outbound-webhooks-standard-webhooks-10))" },
  },
  {
    name: "SVC_WEBHOOK_TIMEOUT_MS",
    type: "integer",
    default: 15_000,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "webhooks",
    description:
      "Only a 2xx within this many milliseconds counts as delivered.",
    docs: { table: "main", default: "15000", meaning:
        "only a 2xx within this counts as delivered" },
  },
  {
    name: "SVC_WEBHOOK_URL_ALLOW",
    type: "list",
    readBy: ["gateway", "workspace"],
    section: "webhooks",
    description:
      "Comma list of host:port receivers that may be private (loopback, RFC 1918, link-local are refused at connect time otherwise): on-premises receivers, tests.",
    docs: { table: "main", default: "empty", meaning:
        "comma list of `host:port` receivers that may be private (refused at connect time otherwise)" },
  },
  {
    name: "SVC_WEBHOOK_CONCURRENCY",
    type: "integer",
    default: 32,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "webhooks",
    description:
      "Attempts in flight at once (at most 4 for one subscription: a slow receiver holds no others).",
    docs: { table: "main", default: "32", meaning:
        "webhook attempts in flight at once, at most 4 of them to one subscription" },
  },
  {
    name: "SVC_WEBHOOK_DISABLE_AFTER_MS",
    type: "integer",
    default: 432_000_000,
    min: 1,
    readBy: ["gateway", "workspace"],
    section: "webhooks",
    description:
      "A subscription with no successful delivery for this long is disabled (5 days).",
    docs: { table: "main", default: "432000000 (5 days)", meaning:
        "a subscription with no successful delivery for this long is disabled" },
  },
  {
    name: "SVC_MCP_READ_MAX_BYTES",
    type: "integer",
    default: 1_048_576,
    min: 1,
    readBy: ["gateway"],
    section: "mcp",
    description:
      "read_file returns documents up to this many bytes (larger: a tool error naming the download URL).",
    docs: { table: "mcp", default: "1048576", meaning:
        "`read_file` answers documents up to this size (larger: a tool error naming the download URL)" },
  },
  {
    name: "SVC_MCP_AUTH_FAILURE_BURST",
    type: "integer",
    default: 10,
    min: 1,
    readBy: ["gateway"],
    section: "mcp",
    description:
      "Failed authentications one client address (and one presented key) may make in a burst; past it, 429 with Retry-After. A valid key is let in even from a limited address.",
    docs: { table: "mcp", default: "10", meaning:
        "failed authentications one client address, and one presented key, may make in a burst; past it, 429 with `Retry-After` (a valid key is still let in from a limited address)" },
  },
  {
    name: "SVC_MCP_AUTH_FAILURE_REFILL_MS",
    type: "integer",
    default: 6000,
    min: 1,
    readBy: ["gateway"],
    section: "mcp",
    description:
      "Once the burst is spent, one more attempt per this many milliseconds.",
    docs: { table: "mcp", default: "6000", meaning:
        "once the burst is spent, one more attempt per this many milliseconds" },
  },
  {
    name: "SVC_MCP_MAX_BATCH",
    type: "integer",
    default: 20,
    min: 1,
    max: 100,
    readBy: ["gateway"],
    section: "mcp",
    description:
      "Messages one JSON-RPC batch may hold (1-100); larger or empty: 400, JSON-RPC Invalid Request.",
    docs: { table: "mcp", default: "20", meaning:
        "messages one JSON-RPC batch may hold (1 to 100, the SDK's own cap); a larger or an empty batch answers 400 with a JSON-RPC Invalid Request error (`-32600`, id null), as the SDK's transport does. A batch's tool calls run one after another, each after a turn of the event loop, so a batch never holds up other requests" },
  },
  {
    name: "SVC_CLIENT_ADDRESS_HEADER",
    type: "header name",
    readBy: ["gateway", "workspace"],
    section: "mcp",
    description:
      "Header a trusted reverse proxy writes the client address into (e.g. x-forwarded-for); unset: the socket's peer address. Only set it when every request passes that proxy.",
    docs: { table: "mcp", default: "unset (off)", meaning:
        "header your trusted reverse proxy writes the client address into (e.g. `x-forwarded-for`, `x-real-ip`); unset, the socket's peer is the client. Set it only when every request comes through that proxy and it overwrites or appends the header: otherwise callers choose their address. The same address counts a client's failed authentications here, its share of the request-body budget and its share of the event streams (`src/http/server/clientAddress.ts`)" },
  },
  {
    name: "SVC_TRUSTED_PROXY_HOPS",
    type: "integer",
    default: 1,
    min: 1,
    max: 9999,
    readBy: ["gateway", "workspace"],
    section: "mcp",
    description:
      "Trusted proxies in front: the client is the header's entry this many places from the right.",
    docs: { table: "mcp", default: "1", meaning:
        "trusted proxies in front of the gateway: the client is the header's entry this many places from the right (entries further left are the caller's own and ignored)" },
  },
  {
    name: "SVC_AGENT_KEY",
    type: "secret",
    readBy: ["mcp"],
    section: "mcp",
    description:
      "`svc mcp` (stdio): the agent's API key (environment only).",
    docs: { table: "mcp", default: "unset", meaning:
        "`svc mcp` (stdio): the agent's API key; environment only" },
  },
  {
    name: "SVC_SHUTDOWN_GRACE_MS",
    type: "integer",
    default: 10_000,
    min: 0,
    max: MAX_TIMER_MS,
    readBy: ["gateway", "workspace"],
    section: "shutdown",
    description:
      "On SIGTERM/SIGINT the process drains: /readyz answers 503, no new connections, idle ones close, every request received is answered (the last on each connection with Connection: close). This bounds the drain, from the signal: what is still open then is cut and the exit code is 1. Keep it below the orchestrator's kill timeout (Kubernetes terminationGracePeriodSeconds, 30 s) minus any preStop delay. `npm run workspace` reads it too.",
    docs: { table: "main", default: "10000", meaning:
        "on SIGTERM/SIGINT, the bound of the drain; what is still open then is cut and the exit code is 1" },
  },
  {
    name: "SVC_LOG_LEVEL",
    type: "choice",
    default: "info",
    choices: ["trace","debug","info","warning","error","fatal","none"],
    readBy: ["gateway", "workspace"],
    section: "observability",
    description:
      "Lowest level logged: trace, debug, info, warning, error, fatal, none. Request lines are info (5xx: error).",
    docs: { table: "operations", default: "info", meaning:
        "lowest level logged: trace, debug, info, warning, error, fatal, none" },
  },
  {
    name: "SVC_LOG_FORMAT",
    type: "choice",
    default: "auto",
    choices: ["auto","json","pretty"],
    readBy: ["gateway", "workspace"],
    section: "observability",
    description:
      "auto (JSON unless stdout is a terminal), json or pretty.",
    docs: { table: "operations", default: "auto", meaning:
        "auto (JSON unless stdout is a terminal), json or pretty" },
  },
  {
    name: "SVC_LOG_BACKLOG_BYTES",
    type: "integer",
    default: 8_388_608,
    min: 1,
    readBy: ["gateway"],
    section: "observability",
    description:
      "Log output held for a stdout that does not keep up (a stalled log collector); past it lines are dropped and counted, and one line says how many once stdout takes output again.",
    docs: { table: "operations", default: "8 MiB", meaning:
        "log output held in memory for a stdout that does not keep up; past it lines are dropped, counted, and a `log: N line(s) dropped` line follows once it does" },
  },
  {
    name: "SVC_METRICS_TOKEN",
    type: "secret",
    readBy: ["gateway"],
    section: "observability",
    description:
      "When set, GET /metrics needs Authorization: Bearer <token>.",
    docs: { table: "operations", default: "unset", meaning:
        "bearer token `/metrics` requires when set" },
  },
  {
    name: "SVC_CORS_ORIGINS",
    type: "list",
    readBy: ["gateway"],
    section: "observability",
    description:
      "Browser origins allowed to call the API: comma list of scheme://host[:port], or *. Unset: CORS off. Also the only pages on other sites (or sibling subdomains, other ports) that may write: others get 403.",
    docs: { table: "operations", default: "unset (off)", meaning:
        "browser origins allowed to call the API, comma list or `*`; the only pages on other sites that may write (others: 403)" },
  },
  {
    name: "SVC_CORS_CREDENTIALS",
    type: "boolean",
    default: false,
    readBy: ["gateway"],
    section: "observability",
    description:
      "Let browsers send cookies / HTTP authentication to the allowed origins (refused with *).",
    docs: { table: "operations", default: "false", meaning:
        "allow cookies / HTTP authentication from those origins" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    type: "url",
    readBy: ["gateway"],
    section: "observability",
    example: ["http://127.0.0.1:4318"],
    description:
      "Trace export over OTLP/HTTP (standard OpenTelemetry settings). Unset: no export. When set, SVC_TRACING defaults to true.",
    docs: { table: "operations", default: "unset", meaning:
        "trace export over OTLP/HTTP (then `SVC_TRACING` defaults to true)" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_PROTOCOL",
    type: "choice",
    default: "http/protobuf",
    choices: ["http/protobuf","http/json"],
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description:
      "OTLP/HTTP encoding of exported traces.",
    docs: { table: "operations", default: "`http/protobuf`", meaning:
        "`http/protobuf` or `http/json`" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_HEADERS",
    type: "secret",
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description:
      "Headers sent with every export, key=value pairs separated by commas.",
    docs: { table: "operations", default: "unset", meaning:
        "headers sent with every export (`key=value,key2=value2`); never logged" },
  },
  {
    name: "OTEL_SERVICE_NAME",
    type: "text",
    default: "tenant-gateway",
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description:
      "The service name the traces carry.",
    docs: { table: "operations", default: "`tenant-gateway`", meaning:
        "the service name the traces carry (a `service.name` in `OTEL_RESOURCE_ATTRIBUTES` wins)" },
  },
  {
    name: "OTEL_RESOURCE_ATTRIBUTES",
    type: "text",
    readBy: ["gateway"],
    section: "observability",
    description: "Resource attributes the traces carry, key=value pairs separated by commas.",
    docs: { table: "operations", default: "unset", meaning: "resource attributes the traces carry (`key=value,key2=value2`)" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    type: "url",
    readBy: ["gateway"],
    section: "observability",
    description: "Or the traces endpoint itself (used as it is, no /v1/traces added); wins over OTEL_EXPORTER_OTLP_ENDPOINT.",
    docs: { table: "operations", default: "unset", meaning:
        "the traces endpoint itself, used as given; wins over `OTEL_EXPORTER_OTLP_ENDPOINT` (which gets `/v1/traces` appended)" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    type: "choice",
    choices: ["http/protobuf", "http/json"],
    readBy: ["gateway"],
    section: "observability",
    description: "The traces' own OTEL_EXPORTER_OTLP_PROTOCOL; wins over it.",
    docs: { table: "operations", default: "unset", meaning: "wins over `OTEL_EXPORTER_OTLP_PROTOCOL` for traces" },
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    type: "secret",
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description: "The traces' own OTEL_EXPORTER_OTLP_HEADERS; wins over it.",
    docs: { table: "operations", default: "unset", meaning: "wins over `OTEL_EXPORTER_OTLP_HEADERS` for traces; never logged" },
  },
  {
    name: "OTEL_TRACES_EXPORTER",
    type: "choice",
    default: "otlp",
    choices: ["otlp", "none"],
    readBy: ["gateway"],
    section: "observability",
    description: "none turns the export off (as OTEL_SDK_DISABLED=true does) whatever the endpoint.",
    docs: { table: "operations", default: "`otlp`", meaning: "`none` turns trace export off whatever the endpoint" },
  },
  {
    name: "OTEL_SDK_DISABLED",
    type: "boolean",
    default: false,
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description: "true turns trace export off.",
    docs: { table: "operations", default: "false", with: "OTEL_TRACES_EXPORTER" },
  },
  {
    name: "OTEL_BSP_SCHEDULE_DELAY",
    type: "integer",
    default: 5000,
    readBy: ["gateway"],
    section: "observability",
    description: "Milliseconds between two exports of the spans gathered, and the most spans one export sends.",
    docs: { table: "operations", default: "5000", meaning:
        "milliseconds between two exports of the spans gathered; the most spans one export sends" },
  },
  {
    name: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    type: "integer",
    default: 512,
    readBy: ["gateway"],
    section: "observability",
    envShared: true,
    description: "The most spans one export sends.",
    docs: { table: "operations", default: "512", with: "OTEL_BSP_SCHEDULE_DELAY" },
  },
  {
    name: "SVC_EVENT_STREAMS_MAX",
    type: "integer",
    default: 100,
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "At most this many at once (503 with Retry-After past it).",
    docs: { table: "main", default: "100", meaning:
        "live event streams (`GET /v1/tasks/:taskId/events/stream`) served at once; past it 503 with `Retry-After`" },
  },
  {
    name: "SVC_EVENT_STREAMS_PER_CLIENT",
    type: "integer",
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "Of those, at most this many from one client (its address, as for the body budget's share). Unset: a quarter of SVC_EVENT_STREAMS_MAX.",
    docs: { table: "main", default: "a quarter of `SVC_EVENT_STREAMS_MAX`", meaning:
        "of those, the most one client may hold (its address, as for the body budget's share); past it 503 with `Retry-After: 1`" },
  },
  {
    name: "SVC_EVENTS_POLL_MS",
    type: "integer",
    default: 1000,
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "How often a watched task is probed for events written by other processes (ms); writes in this process wake its streams at once.",
    docs: { table: "main", default: "1000", meaning:
        "how often a watched task's timeline is probed for events written by other processes (one probe per task, whatever the number of streams); writes in this process wake streams at once" },
  },
  {
    name: "SVC_EVENTS_KEEPALIVE_MS",
    type: "integer",
    default: 15_000,
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "Keep-alive comment interval on open streams (ms).",
    docs: { table: "main", default: "15000", meaning:
        "a `: keep-alive` comment on every open stream at this interval" },
  },
  {
    name: "SVC_EVENTS_PAGE_BYTES",
    type: "integer",
    default: 1_048_576,
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "Bytes of one GET /v1/tasks/:taskId/events answer and of one stream page (about their JSON): the answer stops after the event that takes it there (hasMore, nextAfterSeq); one larger event goes out alone. A stream's pages are at most 256 KiB of this; it holds at most one while its client reads.",
    docs: { table: "main", default: "1048576", meaning:
        "bytes (about, of event JSON) of one `GET /events` answer and of one stream page (a stream's at most 256 KiB): the answer stops after the event that takes it there (UTF-8 bytes, counted once, by the store) and says `hasMore`/`nextAfter`; one larger event goes out alone" },
  },
  {
    name: "SVC_EVENTS_STREAM_STALL_MS",
    type: "integer",
    default: 30_000,
    min: 1,
    readBy: ["gateway"],
    section: "streams",
    description:
      "A stream whose client takes none of its pending bytes for this long is disconnected (ms); an EventSource then reconnects with Last-Event-ID.",
    docs: { table: "main", default: "30000", meaning:
        "an event stream whose client takes none of its pending bytes for this long is disconnected (it resumes with `Last-Event-ID`)" },
  },
] as const satisfies ReadonlyArray<SettingDeclaration>

export type SettingName = (typeof DECLARATIONS)[number]["name"]

/** Every setting, in the order `.env.example` lists them. */
export const SETTINGS: ReadonlyArray<SettingDeclaration & { readonly name: SettingName }> = DECLARATIONS

const byName: ReadonlyMap<string, SettingDeclaration> = new Map(SETTINGS.map((s) => [s.name, s]))

/** The declaration of `name`. */
export const setting = (name: SettingName): SettingDeclaration => byName.get(name)!

/** Whether `name` is declared (the unknown-setting warning asks of names from the environment). */
export const isSetting = (name: string): boolean => byName.has(name)

/** An integer setting's default. */
export const defaultOf = (name: SettingName): number => {
  const value = setting(name).default
  if (typeof value !== "number") throw new Error(`${name} has no integer default`)
  return value
}

/** A text setting's default. */
export const defaultTextOf = (name: SettingName): string => {
  const value = setting(name).default
  if (typeof value !== "string") throw new Error(`${name} has no text default`)
  return value
}
