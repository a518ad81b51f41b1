/**
 * Help written for this tool: one entry per command, plain text (no colour codes), lines of at
 * most 100 columns. `svc --help`, `svc <group> --help` and `svc <command> --help` print these
 * instead of effect/cli's generated pages. test/cli/help.test.ts checks that every command of
 * the tree (app.ts) has an entry and names every option the command takes.
 */

export interface CommandHelp {
  /** The arguments after the command path, as in the usage line. */
  readonly usage: string
  readonly summary: string
  /** More about what it does, wrapped at 100 columns by hand. */
  readonly details?: ReadonlyArray<string>
  /** [flag, what it does] for the command's own options. */
  readonly options?: ReadonlyArray<readonly [string, string]>
  /** Which common options apply: the gateway's (--url, --json), the registry's, or none. */
  readonly common: "gateway" | "registry" | "none"
}

export interface GroupHelp {
  readonly summary: string
  readonly details?: ReadonlyArray<string>
}

const TASK_ID = "<taskId> is a task UUID, or a child workflow's <uuid>:<step>:<slug>."

export const GROUPS: Readonly<Record<string, GroupHelp>> = {
  entities: { summary: "The tenant's entities" },
  tasks: { summary: "An entity's tasks and the workflows it can start" },
  task: { summary: "Drive one task: its current step, approvals, row actions", details: [TASK_ID] },
  events: { summary: "A task's event timeline", details: [TASK_ID] },
  files: { summary: "A task's files: list, upload, have the gateway fetch, download", details: [TASK_ID] },
  data: { summary: "Structured records for a task" },
  subledger: { summary: "Correct subledger rows directly (operations tooling)" },
  gl: { summary: "The tenant's general-ledger connection" },
  agents: {
    summary: "Externally hosted agents in the registry (on the admin listener)",
    details: ["SVC_ADMIN_TOKEN (environment only) is sent as the bearer token."]
  },
  links: {
    summary: "Links that approve or reject a waiting step, for one person (on the admin listener)",
    details: [
      "The gateway makes them only when SVC_PUBLIC_URL is set. SVC_ADMIN_TOKEN (environment only)",
      "is sent as the bearer token."
    ]
  },
  webhooks: {
    summary: "The tenant's outbound webhook subscriptions (on the admin listener)",
    details: [
      "Deliveries are signed as Standard Webhooks 1.0 (webhook-id, webhook-timestamp, webhook-signature).",
      "Every command names the tenant with --tenant <slug>. SVC_ADMIN_TOKEN (environment only) is sent as",
      "the bearer token."
    ]
  }
}

const FILE_META: ReadonlyArray<readonly [string, string]> = [
  ["--source <s>", "Source id the workflow queries files by (required unless --submit)"],
  ["--submit", "Fill source and signal from the current step's submit_file action"],
  ["--file-name <name>", "Name to store the file under (default: taken from the source)"],
  ["--content-type <type>", "MIME type (default: guessed from the name)"],
  ["--period <YYYY-MM>", "Accounting period"],
  ["--schema-slug <slug>", "Extraction schema used downstream"],
  ["--signal-task-id <id>", "Workflow to signal once the file is stored (with --signal-name)"],
  ["--signal-name <name>", "Signal to send once the file is stored"],
  ["--progress auto|always|never", "Progress bar on stderr (auto: files over 1 MiB on a terminal)"]
]

export const COMMANDS: Readonly<Record<string, CommandHelp>> = {
  health: { usage: "", summary: "Check that the gateway is up", common: "gateway" },
  "entities list": { usage: "", summary: "List the tenant's entities", common: "gateway" },
  "tasks list": {
    usage: "<entityId> [--status <s>] [--awaiting <component>] [--limit <n>] [--cursor <c>]",
    summary: "List an entity's tasks, with what each is awaiting",
    details: ["With --limit, a page; when more follow, the command to read the next is printed on stderr."],
    options: [
      ["--status <s>", "Only tasks in this status: IN_PROGRESS, COMPLETED or FAILED"],
      ["--awaiting <component>", "Only running tasks whose current step awaits it (e.g. TABLE_REVIEW)"],
      ["--limit <n>", "At most this many tasks (1..500)"],
      ["--cursor <c>", "The next page of an earlier --limit answer (printed with it)"]
    ],
    common: "gateway"
  },
  inbox: {
    usage: "[--assignee <who>] [--awaiting <c>] [--entity <id>] [--workflow <id>] [--overdue] [--limit <n>]",
    summary: "What waits, and for whom, across entities (oldest first)",
    details: [
      "--assignee me is the actor --actor names (and the groups the edge gives them). When more",
      "follow, the command to read the next page is printed on stderr."
    ],
    options: [
      ["--assignee <who>", "me, or an actor or group:<name> as the steps name them"],
      ["--awaiting <component>", "Only steps of this component (e.g. TABLE_REVIEW)"],
      ["--entity <id>", "Only this entity's tasks"],
      ["--workflow <id>", "Only this workflow's tasks"],
      ["--overdue", "Only steps past their due time"],
      ["--limit <n>", "Items per page (1..200, default 50)"],
      ["--cursor <c>", "The next page of an earlier answer (printed with it; same filters)"]
    ],
    common: "gateway"
  },
  "tasks workflows": {
    usage: "<entityId>",
    summary: "Workflows an entity can start, with their start parameters (* = required)",
    common: "gateway"
  },
  "tasks start": {
    usage: "<entityId> <workflowId> [--param key=value]... [--no-check]",
    summary: "Start a task running a workflow",
    details: [
      "Values are JSON when they parse (75, true, [\"a\"]), else text. They are checked against",
      "the workflow's start parameters before anything is sent."
    ],
    options: [
      ["-p, --param <key=value>", "A start parameter; repeat for more"],
      ["--no-check", "Send the parameters without checking them first"]
    ],
    common: "gateway"
  },
  "task ui": {
    usage: "<taskId>",
    summary: "The task, its current step and the action it expects, every step's status",
    common: "gateway"
  },
  "task snapshots": { usage: "<taskId>", summary: "What was shown and decided at each completed step", common: "gateway" },
  "task approve": {
    usage: "<taskId> [--comments <text>]",
    summary: "Approve the current step",
    options: [["-m, --comments <text>", "A comment, recorded in the audit log"]],
    common: "gateway"
  },
  "task reject": {
    usage: "<taskId> [--comments <text>]",
    summary: "Reject the current step",
    options: [["-m, --comments <text>", "The reason, recorded in the audit log"]],
    common: "gateway"
  },
  "task row-action": {
    usage: "<taskId> reject_row <rowId> | edit_cell <rowId> --field <f> --value <v>",
    summary: "Act on a row of the task's table step",
    options: [
      ["--ledger <name>", "The subledger (default: expenses)"],
      ["--field <column>", "edit_cell: the column to change"],
      ["--value <value>", "edit_cell: the new value (JSON when it parses, else text)"]
    ],
    common: "gateway"
  },
  "task claim": {
    usage: "<taskId> [--override]",
    summary: "Claim the task's current step for yourself (409 names whoever holds it)",
    options: [["--override", "Take over a step assigned to an agent (recorded in the timeline)"]],
    common: "gateway"
  },
  "task release": { usage: "<taskId>", summary: "Release the claim on the task's current step", common: "gateway" },
  "events list": {
    usage: "<taskId> [--after <seq>] [--limit <n>]",
    summary: "Print the task's timeline, in seq order",
    options: [
      ["--after <seq>", "Only events with a greater seq"],
      ["--limit <n>", "At most this many events (1..1000)"]
    ],
    common: "gateway"
  },
  "events follow": {
    usage: "<taskId> [--interval <s>] [--timeout <s>] [--until-done] [--after <seq>]",
    summary: "Poll and print new events as they come; Ctrl-C stops",
    details: [
      "reasoning.delta events of one groupKey stream into one growing line.",
      "Each poll asks only for the events after the last seq printed."
    ],
    options: [
      ["--interval <seconds>", "Time between polls (default 1)"],
      ["--timeout <seconds>", "Stop after this long"],
      ["--until-done", "Stop once the task is COMPLETED or FAILED"],
      ["--after <seq>", "Start after this seq"]
    ],
    common: "gateway"
  },
  "files list": {
    usage: "<taskId> [--source <s>]",
    summary: "List up to 20 of the task's files, newest first",
    options: [["--source <s>", "Only files of this source"]],
    common: "gateway"
  },
  "files upload": {
    usage: "<taskId> <path> (--source <s> | --submit) [options]",
    summary: "Upload a local file to the task",
    details: ["--submit completes a FILE_UPLOAD step: source and signal come from its submit_file action."],
    options: FILE_META,
    common: "gateway"
  },
  "files ingest": {
    usage: "<taskId> (url <url> | local <path> | inline <file>) [options]",
    summary: "Have the gateway fetch a file itself",
    details: [
      "url: an http(s) URL the gateway downloads; local: a path on the gateway's host (under",
      "its SVC_LOCAL_INGEST_ROOT); inline: a local file sent inline as base64."
    ],
    options: [["-H, --header <Name: value>", "url: a request header for the download; repeat for more"], ...FILE_META],
    common: "gateway"
  },
  "files download": {
    usage: "<taskId> <documentRef> [-o <path> | -o -] [--force]",
    summary: "Download a file to its stored name here, to a path, or to stdout",
    options: [
      ["-o, --output <path>", "Where to write; - for stdout"],
      ["-f, --force", "Overwrite an existing file"]
    ],
    common: "gateway"
  },
  "data ingest": {
    usage: "<taskId> <file> [--kind <k>] [--signal-task-id <id> --signal-name <n>] [--envelopes]",
    summary: "Send the records of a JSON (array or object) or NDJSON file as one batch",
    options: [
      ["--kind <kind>", "Discriminator of the batch (e.g. expense)"],
      ["--envelopes", "Records are already {data, sourceRef} envelopes"],
      ["--signal-task-id <id>", "Workflow to signal once per record after the batch is stored"],
      ["--signal-name <name>", "Signal to send"]
    ],
    common: "gateway"
  },
  "subledger reject": { usage: "<ledger> <rowId>", summary: "Reject a subledger row directly", common: "gateway" },
  "subledger edit": {
    usage: "<ledger> <rowId> <field> <value>",
    summary: "Edit one cell of a subledger row directly",
    details: ["<value> is JSON when it parses (12.5, null, true), else text."],
    common: "gateway"
  },
  "gl status": { usage: "", summary: "Show the tenant's GL connection", common: "gateway" },
  "gl connect": {
    usage: "[--service <id>] [--timeout <s>] [--interval <s>] [--no-wait]",
    summary: "Print the connect session URL, then wait until the connection is active",
    details: ["Exit 1 when the timeout passes first."],
    options: [
      ["--service <id>", "Preselect the GL service"],
      ["--timeout <seconds>", "How long to wait (default 300)"],
      ["--interval <seconds>", "Time between status checks (default 2)"],
      ["--no-wait", "Print the URL and stop"]
    ],
    common: "gateway"
  },
  "gl disconnect": { usage: "", summary: "Remove the GL connection (a no-op without one)", common: "gateway" },
  "agents register": {
    usage: "<kind>://<native-id> --tenant <slug> --name <name>",
    summary: "Register an externally hosted agent; prints its API key once",
    options: [
      ["--tenant <slug>", "The tenant the agent works for"],
      ["--name <name>", "A name to show"]
    ],
    common: "registry"
  },
  "agents list": {
    usage: "[--tenant-id <id>]",
    summary: "List registered agents (keys are never shown again)",
    options: [["--tenant-id <id>", "Only this tenant's agents"]],
    common: "registry"
  },
  "agents get": { usage: "<agentId>", summary: "Show one agent", common: "registry" },
  "agents delete": { usage: "<agentId>", summary: "Remove an agent from the registry", common: "registry" },
  "agents add-version": {
    usage: "<agentId> <version> [--config '{...}' | --config-file <path>]",
    summary: "Record a version of an agent",
    options: [
      ["--config <json>", "The version's configuration"],
      ["--config-file <path>", "The same, read from a file"]
    ],
    common: "registry"
  },
  "links create": {
    usage: "<taskId> --actor <email> --tenant <slug> [--expires-in <duration>]",
    summary: "Approve and reject links for one person; prints both URLs and the expiry",
    details: [
      "For the task's current APPROVAL step. Either link decides once (the pair is single-use), as",
      "that person, under the step's rules; opening one changes nothing until its page is confirmed."
    ],
    options: [
      ["--actor <email>", "The person the links decide as"],
      ["--tenant <slug>", "The task's tenant"],
      ["--expires-in <duration>", "ISO 8601 duration (PT72H, P3D, P1DT12H); default PT72H, at most P30D"]
    ],
    common: "registry"
  },
  "links revoke": {
    usage: "[<taskId>] [--actor <email>] --tenant <slug>",
    summary: "End a task's or a person's links now (both: that person's on that task)",
    options: [
      ["--actor <email>", "Only this person's links (any case)"],
      ["--tenant <slug>", "The tenant"]
    ],
    common: "registry"
  },
  "webhooks add": {
    usage: "<url> --tenant <slug> [--events <type,...>] [--description <text>]",
    summary: "Subscribe a receiver; prints its id and signing secret once",
    details: [
      "Event types: task.created, task.waiting, step.completed, task.status_changed, row.edited,",
      "row.rejected, file.stored, data.ingested, source.submitted, gl.connected, gl.disconnected."
    ],
    options: [
      ["--tenant <slug>", "The tenant (its slug)"],
      ["--events <type,...>", "Only these event types (default: every type)"],
      ["--description <text>", "What the receiver is"]
    ],
    common: "registry"
  },
  "webhooks list": { usage: "--tenant <slug>", summary: "List the tenant's subscriptions", options: [["--tenant <slug>", "The tenant (its slug)"]], common: "registry" },
  "webhooks remove": {
    usage: "<subscriptionId> --tenant <slug>",
    summary: "Remove a subscription and what waits for it",
    options: [["--tenant <slug>", "The tenant (its slug)"]],
    common: "registry"
  },
  "webhooks rotate-secret": {
    usage: "<subscriptionId> --tenant <slug>",
    summary: "New signing secret; the old one also signs for 24 hours",
    options: [["--tenant <slug>", "The tenant (its slug)"]],
    common: "registry"
  },
  "webhooks deliveries": {
    usage: "<subscriptionId> --tenant <slug> [--limit <n>]",
    summary: "Delivery attempts: time, event, status or error, duration",
    options: [["--tenant <slug>", "The tenant (its slug)"], ["--limit <n>", "How many, newest first (1-1000, default 50)"]],
    common: "registry"
  },
  "webhooks resend": {
    usage: "<deliveryId> --tenant <slug>",
    summary: "Send a delivery again (same webhook-id)",
    options: [["--tenant <slug>", "The tenant (its slug)"]],
    common: "registry"
  },
  "webhooks enable": { usage: "<subscriptionId> --tenant <slug>", summary: "Enable a subscription", options: [["--tenant <slug>", "The tenant (its slug)"]], common: "registry" },
  "webhooks disable": { usage: "<subscriptionId> --tenant <slug>", summary: "Disable a subscription", options: [["--tenant <slug>", "The tenant (its slug)"]], common: "registry" },
  mcp: {
    usage: "",
    summary: "Serve the agent tools over stdio (MCP) for a local agent host",
    details: ["Forwards to the gateway's /mcp with the agent key from SVC_AGENT_KEY (environment only)."],
    common: "gateway"
  }
}

const COMMON: Record<"gateway" | "registry", ReadonlyArray<readonly [string, string]>> = {
  gateway: [
    ["--url <url>", "The gateway (default: SVC_URL, else http://127.0.0.1:3000)"],
    ["--json", "Print the answer as JSON (only JSON on stdout)"],
    ["--actor <name>", "Who acts, sent in the --actor-header header (default: SVC_ACTOR)"],
    ["--actor-header <name>", "That header's name (default: SVC_ACTOR_HEADER)"]
  ],
  registry: [
    ["--admin-url <url>", "The admin listener (default: SVC_ADMIN_URL, else http://127.0.0.1:3001)"],
    ["--json", "Print the answer as JSON (only JSON on stdout)"]
  ]
}

const optionLines = (options: ReadonlyArray<readonly [string, string]>): Array<string> => {
  const width = Math.min(30, Math.max(...options.map(([f]) => f.length)))
  return options.map(([flag, text]) =>
    flag.length > width ? `  ${flag}\n  ${" ".repeat(width)}  ${text}` : `  ${flag.padEnd(width)}  ${text}`
  )
}

/** The top-level page. */
const topHelp = (version: string): string => {
  const leaf = Object.entries(COMMANDS)
  const width = Math.max(...leaf.map(([p]) => p.length))
  return [
    `tenant-svc ${version}: the command-line client of the tenant gateway (also installed as svc)`,
    "",
    "Usage: svc [--url <url>] [--json] <command> [arguments] [options]",
    "",
    "Commands:",
    ...leaf.map(([path, h]) => `  ${path.padEnd(width)}  ${h.summary}`),
    "",
    "Options (before or after the command):",
    ...optionLines([
      ...COMMON.gateway,
      ["--admin-url <url>", "The admin listener, for agents and webhooks commands"],
      ["-h, --help", "This help; svc <command> --help for one command"],
      ["--version", "Print the version"]
    ]),
    "",
    "SVC_TOKEN (environment only), when set, is sent to the gateway as a bearer token.",
    "Exit codes: 0 success; 1 an API error, an unreachable service or a timeout; 2 a usage error.",
    "Run `svc <command> --help` for a command's arguments and options."
  ].join("\n")
}

const groupHelp = (name: string, group: GroupHelp): string => {
  const subs = Object.entries(COMMANDS).filter(([p]) => p.startsWith(`${name} `))
  const width = Math.max(...subs.map(([p]) => p.length))
  return [
    `svc ${name}: ${group.summary}`,
    ...(group.details !== undefined ? ["", ...group.details] : []),
    "",
    "Commands:",
    ...subs.map(([p, h]) => `  ${p.padEnd(width)}  ${h.summary}`),
    "",
    `Run \`svc ${name} <command> --help\` for one of them.`
  ].join("\n")
}

const commandHelp = (path: string, help: CommandHelp): string => {
  const options = [...(help.options ?? []), ...(help.common === "none" ? [] : COMMON[help.common]), ["-h, --help", "This help"] as const]
  return [
    `svc ${path}: ${help.summary}`,
    "",
    `Usage: svc ${path}${help.usage === "" ? "" : ` ${help.usage}`}`,
    ...(help.details !== undefined ? ["", ...help.details] : []),
    "",
    "Options:",
    ...optionLines(options)
  ].join("\n")
}

/** The help page for a command path ([] = the top), or undefined when the path names nothing. */
export const helpFor = (path: ReadonlyArray<string>, version: string): string | undefined => {
  if (path.length === 0) return topHelp(version)
  const key = path.join(" ")
  const command = COMMANDS[key]
  if (command !== undefined) return commandHelp(key, command)
  const group = path.length === 1 ? GROUPS[key] : undefined
  return group === undefined ? undefined : groupHelp(key, group)
}

/** Child command names per node of the tree, from COMMANDS: "" is the top. */
export const commandTree = (): ReadonlyMap<string, ReadonlySet<string>> => {
  const tree = new Map<string, Set<string>>()
  const add = (parent: string, child: string) => {
    let s = tree.get(parent)
    if (s === undefined) tree.set(parent, (s = new Set()))
    s.add(child)
  }
  for (const path of Object.keys(COMMANDS)) {
    const parts = path.split(" ")
    for (let i = 0; i < parts.length; i++) add(parts.slice(0, i).join(" "), parts[i]!)
  }
  return tree
}
