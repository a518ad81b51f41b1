/** agents register / list / get / delete / add-version, against the agent registry on the admin listener (--admin-url, SVC_ADMIN_TOKEN). */
import * as Argument from "effect/cli/Argument"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { readFile } from "node:fs/promises"
import { isUuid } from "../../api/ids.js"
import type { Agent } from "../../client/registry.js"
import { CreateAgentVersionDto } from "../../client/registry.js"
import {
  agentIdArg,
  checkPayload,
  fields,
  group,
  line,
  note,
  parseValue,
  registryCommand,
  table,
  usage,
  unreadable
} from "../common.js"

/** `<kind>://<native-id>`: kind a URI scheme (lowercased), native id non-empty. */
export const parseAgentUri = (uri: string): { kind: string; nativeId: string; externalRef: string } | undefined => {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(\S.*)$/.exec(uri.trim())
  if (m === null) return undefined
  const kind = m[1]!.toLowerCase()
  return { kind, nativeId: m[2]!, externalRef: `${kind}://${m[2]!}` }
}

const renderAgent = (a: Agent) =>
  Effect.gen(function*() {
    yield* fields([
      ["Agent", a.id],
      ["Name", a.name],
      ["Kind", a.kind],
      ["Reference", a.externalRef],
      ["Tenant", a.tenantId],
      ["Created", a.createdAt]
    ])
    yield* line()
    yield* table([
      ["VERSION", (v) => v.version],
      ["CREATED", (v) => v.createdAt],
      ["CONFIG", (v) => JSON.stringify(v.config)]
    ], a.versions)
  })

const register = registryCommand(
  "register",
  "Register an agent hosted on an external platform, e.g. `svc agents register claude://agent_123 --tenant acme --name Reviewer`; prints its API key once",
  {
    uri: Argument.String("kind://native-id").pipe(Argument.withDescription("The agent's platform and native id, e.g. claude://agent_123")),
    // Required, checked together below: a usage error names every one missing.
    tenant: Flag.String("tenant").pipe(Flag.optional, Flag.withDescription("Required: the owning tenant's slug")),
    name: Flag.String("name").pipe(Flag.optional, Flag.withDescription("Required: a display name"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const missing = [["--tenant", args.tenant], ["--name", args.name]] as const
      if (Option.isNone(args.tenant) || Option.isNone(args.name)) {
        return yield* usage(
          missing.filter(([, value]) => Option.isNone(value)).map(([flag]) => `missing flag ${flag}`).join("; ")
        )
      }
      const { uri } = args
      const tenant = args.tenant.value
      const name = args.name.value
      const ref = parseAgentUri(uri)
      if (ref === undefined) {
        return yield* usage(`"${uri}" is not <kind>://<native-id> (for example claude://agent_123 or openai://asst_abc)`)
      }
      const created = yield* ctx.registry.registry.createAgent({
        payload: { kind: ref.kind, externalRef: ref.externalRef, name, tenantSlug: tenant }
      })
      if (ctx.json) yield* line(JSON.stringify(created, null, 2))
      else {
        yield* fields([
          ["Registered agent", created.id],
          ["Name", created.name],
          ["Reference", created.externalRef],
          ["Tenant", `${tenant} (${created.tenantId})`],
          ["API key", created.apiKey]
        ])
      }
      yield* note(
        "WARNING: store the API key now, somewhere safe. It is shown only this once: the registry keeps only its hash and cannot show it again."
      )
    })
)

const list = registryCommand(
  "list",
  "List registered agents (API keys are never shown)",
  { tenantId: Flag.String("tenant-id").pipe(Flag.optional, Flag.withDescription("Only this tenant's agents (UUID)")) },
  ({ tenantId }, ctx) =>
    Effect.gen(function*() {
      if (Option.isSome(tenantId) && !isUuid(tenantId.value)) return yield* usage(`--tenant-id: "${tenantId.value}" is not a UUID`)
      const agents = yield* ctx.registry.registry.listAgents({
        urlParams: Option.match(tenantId, { onNone: () => ({}), onSome: (id) => ({ tenantId: id }) })
      })
      yield* ctx.output(agents, (rows) =>
        table([
          ["ID", (a) => a.id],
          ["NAME", (a) => a.name],
          ["REFERENCE", (a) => a.externalRef],
          ["TENANT", (a) => a.tenantId],
          ["VERSIONS", (a) => a.versions.map((v: { version: string }) => v.version).join(",")],
          ["CREATED", (a) => a.createdAt]
        ], rows))
    })
)

const get = registryCommand("get", "Show a registered agent and its versions", { id: agentIdArg }, ({ id }, ctx) =>
  Effect.flatMap(ctx.registry.registry.getAgent({ path: { id } }), (a) => ctx.output(a, renderAgent)))

const del = registryCommand("delete", "Delete a registered agent, its versions and its API key", { id: agentIdArg }, ({ id }, ctx) =>
  Effect.andThen(
    ctx.registry.registry.deleteAgent({ path: { id } }),
    ctx.output({ ok: true, id }, () => line(`Deleted agent ${id}`))
  ))

const addVersion = registryCommand(
  "add-version",
  "Record a version of an agent, with an optional JSON config (--config '{...}' or --config-file path)",
  {
    id: agentIdArg,
    version: Argument.String("version").pipe(Argument.withDescription("Version label, unique per agent")),
    config: Flag.String("config").pipe(Flag.optional, Flag.withDescription("JSON object")),
    configFile: Flag.String("config-file").pipe(Flag.optional, Flag.withDescription("File holding a JSON object"))
  },
  ({ config, configFile, id, version }, ctx) =>
    Effect.gen(function*() {
      if (Option.isSome(config) && Option.isSome(configFile)) return yield* usage("give --config or --config-file, not both")
      let text: string | undefined = Option.getOrUndefined(config)
      if (Option.isSome(configFile)) {
        text = yield* Effect.tryPromise({
          try: () => readFile(configFile.value, "utf8"),
          catch: (e) => unreadable("--config-file", configFile.value, e)
        })
      }
      const body: Record<string, unknown> = { version }
      if (text !== undefined) {
        const parsed = yield* parseValue(`--config${Option.isSome(configFile) ? "-file" : ""}`, text)
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          return yield* usage(`--config${Option.isSome(configFile) ? "-file" : ""}: expected a JSON object`)
        }
        body.config = parsed
      }
      const payload = yield* checkPayload(CreateAgentVersionDto, body, "agents add-version")
      const v = yield* ctx.registry.registry.createAgentVersion({ path: { id }, payload })
      yield* ctx.output(v, () => line(`Recorded version ${v.version} of agent ${v.agentId}`))
    })
)

export const agents = group("agents", "The agent registry, on the admin listener (--admin-url / SVC_ADMIN_URL, default http://127.0.0.1:3001; SVC_ADMIN_TOKEN sent as bearer token)", [register, list, get, del, addVersion])
