/**
 * What every command shares: the connection options (`--url` / SVC_URL for the gateway;
 * `--admin-url` / SVC_ADMIN_URL and the SVC_ADMIN_TOKEN bearer token for the agent registry on
 * the admin listener; `--json`; who acts: `--actor` / SVC_ACTOR in the `--actor-header` /
 * SVC_ACTOR_HEADER header, and SVC_TOKEN as a bearer token), the clients built from them, output helpers and the two
 * failures the CLI raises itself (a usage error: exit 2; a local failure: exit 1).
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Types from "effect/Types"
import { type GatewayClient, makeGatewayClient, makeRegistryClient, type RegistryClient } from "../client/index.js"
import { NotFound } from "../api/errors.js"
import { TaskId, Uuid } from "../api/ids.js"
import { actorProblem, headerBytes } from "../services/actorValue.js"

export const DEFAULT_URL = "http://127.0.0.1:3000"
/** The embedded gateway's admin listener (SVC_ADMIN_HOST:SVC_ADMIN_PORT defaults). */
export const DEFAULT_ADMIN_URL = "http://127.0.0.1:3001"

/** Bad flags or arguments, found by the CLI before or instead of calling the API: exit 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

/** A failure that is neither a usage error nor an API error (timeout, local file): exit 1. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

export const usage = (message: string) => Effect.fail(new UsageError({ message }))

// ---------------------------------------------------------------------------------------------
// Options shared by every command

const url = Options.text("url").pipe(
  Options.withFallbackConfig(Config.string("SVC_URL")),
  Options.withDefault(DEFAULT_URL),
  Options.withDescription(`Base URL of the gateway (default: SVC_URL, else ${DEFAULT_URL})`)
)

const adminUrl = Options.text("admin-url").pipe(
  Options.withFallbackConfig(Config.string("SVC_ADMIN_URL")),
  Options.withDefault(DEFAULT_ADMIN_URL),
  Options.withDescription(
    `Base URL of the admin listener serving the agent registry: the embedded gateway's SVC_ADMIN_PORT, or a ` +
      `workspace service (default: SVC_ADMIN_URL, else ${DEFAULT_ADMIN_URL}). SVC_ADMIN_TOKEN, when set, is sent as ` +
      `its bearer token`
  )
)

/** The admin token, from the environment only (a flag would show in the process list); empty counts as unset. */
const adminToken = Config.option(Config.redacted(Config.nonEmptyString("SVC_ADMIN_TOKEN")))

const json = Options.boolean("json").pipe(Options.withDescription("Print JSON (for scripts) instead of tables"))

// Who acts, for a gateway behind an edge that names the actor (README "Identity: who acts").
const actor = Options.text("actor").pipe(
  Options.withFallbackConfig(Config.string("SVC_ACTOR")),
  Options.optional,
  Options.withDescription("The actor to name to the gateway, sent in the --actor-header header (default: SVC_ACTOR)")
)

const actorHeader = Options.text("actor-header").pipe(
  Options.withFallbackConfig(Config.string("SVC_ACTOR_HEADER")),
  Options.optional,
  Options.withDescription("The header the gateway reads the actor from (default: SVC_ACTOR_HEADER, the gateway's setting)")
)

/** A bearer token for a gateway that verifies JWTs (SVC_JWT_JWKS); environment only, like SVC_ADMIN_TOKEN. */
const bearerToken = Config.option(Config.redacted(Config.nonEmptyString("SVC_TOKEN")))

const gatewayOptions = { url, json, actor, actorHeader }

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** The headers every call to the gateway carries: the actor (in its header) and SVC_TOKEN, when given. */
const edgeHeaders = (common: { readonly actor: Option.Option<string>; readonly actorHeader: Option.Option<string> }) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = {}
    const token = yield* bearerToken.pipe(Effect.catchAll((e) => usage(`SVC_TOKEN: ${e.message}`)))
    if (Option.isSome(token)) headers["authorization"] = `Bearer ${Redacted.value(token.value)}`
    if (Option.isNone(common.actor)) return headers
    if (Option.isNone(common.actorHeader)) {
      return yield* usage("--actor: name the header the gateway reads it from with --actor-header (or SVC_ACTOR_HEADER)")
    }
    const name = common.actorHeader.value.trim()
    if (!HEADER_NAME.test(name)) return yield* usage(`--actor-header: "${name}" is not a header name`)
    const problem = actorProblem(common.actor.value)
    if (problem !== undefined) return yield* usage(`--actor: the actor ${problem}`)
    // Header values are bytes: the name's UTF-8 (the gateway reads it back as UTF-8).
    headers[name.toLowerCase()] = headerBytes(common.actor.value)
    return headers
  })

/** `effect` with every HttpClient request carrying `headers`. */
const withHeaders = (headers: Record<string, string>) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Object.keys(headers).length === 0
    ? effect
    : Effect.provideServiceEffect(
      effect,
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, HttpClient.mapRequest(HttpClientRequest.setHeaders(headers)))
    )
const registryOptions = { adminUrl, json }

// ---------------------------------------------------------------------------------------------
// Output

export const write = (text: string) => Effect.sync(() => void process.stdout.write(text))
export const line = (text = "") => write(`${text}\n`)
export const note = (text: string) => Effect.sync(() => void process.stderr.write(`${text}\n`))
export const printJson = (value: unknown) => line(JSON.stringify(value, null, 2))

export interface Ctx {
  readonly json: boolean
  readonly baseUrl: string
  readonly gateway: GatewayClient
  /** Print `value` as JSON with --json, else run the human rendering. */
  readonly output: <A>(value: A, human: (value: A) => Effect.Effect<void>) => Effect.Effect<void>
}

export interface RegistryCtx {
  readonly json: boolean
  readonly adminUrl: string
  readonly registry: RegistryClient
  /** Print `value` as JSON with --json, else run the human rendering. */
  readonly output: <A>(value: A, human: (value: A) => Effect.Effect<void>) => Effect.Effect<void>
}

const checkUrl = (flag: string, value: string) => {
  try {
    const u = new URL(value)
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http")
    return Effect.succeed(value.replace(/\/+$/, ""))
  } catch {
    return usage(`${flag}: "${value}" is not an http(s) URL`)
  }
}

const makeCtx = (common: { readonly url: string; readonly json: boolean }) =>
  Effect.gen(function*() {
    const baseUrl = yield* checkUrl("--url", common.url)
    const gateway = yield* makeGatewayClient(baseUrl)
    const ctx: Ctx = {
      json: common.json,
      baseUrl,
      gateway,
      output: (value, human) => common.json ? printJson(value) : human(value)
    }
    return ctx
  })

type Handler<C extends Command.Command.Config, X, E, R> = (
  args: Types.Simplify<Command.Command.ParseConfig<C>>,
  ctx: X
) => Effect.Effect<void, E, R>

/** A leaf command talking to the gateway: its own args/options plus --url and --json. */
export const gatewayCommand = <const Name extends string, const C extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: C,
  handler: Handler<C, Ctx, E, R>
) =>
  Command.make(name, { common: gatewayOptions, args: config }, (parsed: any) =>
    Effect.flatMap(edgeHeaders(parsed.common), (headers) =>
      withHeaders(headers)(Effect.flatMap(makeCtx(parsed.common), (ctx) => handler(parsed.args, ctx))))).pipe(
      Command.withDescription(description)
    ) as Command.Command<Name, R | HttpClient.HttpClient, E | UsageError, unknown>

/** A leaf command talking to the agent registry on the admin listener: --admin-url and --json. */
export const registryCommand = <const Name extends string, const C extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: C,
  handler: Handler<C, RegistryCtx, E, R>
) =>
  Command.make(name, { common: registryOptions, args: config }, (parsed: any) =>
    Effect.gen(function*() {
      const common = parsed.common as { readonly adminUrl: string; readonly json: boolean }
      const adminUrl = yield* checkUrl("--admin-url", common.adminUrl)
      const token: Option.Option<Redacted.Redacted<string>> = yield* adminToken.pipe(
        Effect.catchAll((e) => usage(`SVC_ADMIN_TOKEN: ${e.message}`))
      )
      const registry = yield* makeRegistryClient(adminUrl, { token: Option.getOrUndefined(token) })
      yield* handler(parsed.args, {
        json: common.json,
        adminUrl,
        registry,
        output: (value, human) => common.json ? printJson(value) : human(value)
      }).pipe(
        // An unknown route: most likely the gateway's own port, which serves no registry.
        Effect.mapError((e) =>
          e instanceof NotFound && e.message.startsWith("Cannot ")
            ? new CliFailure({
              message: `${e.message} at ${adminUrl}: the agent registry is on the admin listener; is --admin-url ` +
                `(SVC_ADMIN_URL) its address? [404 Not Found]`
            })
            : e
        )
      )
    })).pipe(
      Command.withDescription(description)
    ) as Command.Command<Name, R | HttpClient.HttpClient, E | UsageError | CliFailure, unknown>

/**
 * A command that only groups subcommands: run without one, it is a usage error naming them.
 */
export const group = <const Name extends string, const Subs extends readonly [Command.Command<any, any, any, any>, ...Array<Command.Command<any, any, any, any>>]>(
  name: Name,
  description: string,
  subcommands: Subs,
  path = `svc ${name}`
) =>
  Command.make(name, {}, () =>
    usage(`${path === "svc" ? "missing command" : `'${path}' needs a command`}: one of ${subcommands.map((c) => Command.getNames(c)).flatMap((n) => [...n]).join(", ")}`)
  ).pipe(Command.withDescription(description), Command.withSubcommands(subcommands))

// ---------------------------------------------------------------------------------------------
// Arguments

const uuidArg = (name: string) =>
  Args.text({ name }).pipe(
    Args.withSchema(
      Schema.String.pipe(
        Schema.filter((s) => Schema.is(Uuid)(s), { message: (issue) => `<${name}>: "${issue.actual}" is not a UUID` })
      )
    ),
    Args.withDescription(`${name} (a UUID)`)
  )

export const entityIdArg = uuidArg("entityId")
export const documentRefArg = uuidArg("documentRef")
export const rowIdArg = uuidArg("rowId")
export const agentIdArg = uuidArg("agentId")

export const taskIdArg = Args.text({ name: "taskId" }).pipe(
  Args.withSchema(
    Schema.String.pipe(
      Schema.filter((s) => Schema.is(TaskId)(s), {
        message: (issue) => `<taskId>: "${issue.actual}" is not a task id (a UUID, or <uuid>:<step>:<slug>)`
      })
    )
  ),
  Args.withDescription("Task id: a UUID, or a child workflow's <uuid>:<step>:<slug>")
)

// ---------------------------------------------------------------------------------------------
// Payload checks: a body the contract refuses is a usage error, reported before sending.

export const checkPayload = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string) =>
  Schema.decodeUnknown(schema, { errors: "first" })(value).pipe(
    Effect.mapError((e) => {
      const issues = ParseResult.ArrayFormatter.formatErrorSync(e)
      const text = issues
        .map((i) => (i.path.length > 0 ? `${i.path.join(".")}: ${i.message}` : i.message))
        .join("; ")
      return new UsageError({ message: `${what}: ${text}` })
    })
  )

// ---------------------------------------------------------------------------------------------
// Values given as text: JSON when the text parses as JSON, else the text itself.

export const parseValue = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/** Parses `key=value` flags; the value is JSON when it parses, else a string. */
export const parseKeyValues = (flag: string, raws: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const out: Array<{ key: string; raw: string; value: unknown }> = []
    for (const raw of raws) {
      const eq = raw.indexOf("=")
      if (eq <= 0) return yield* usage(`${flag} "${raw}": expected key=value`)
      const key = raw.slice(0, eq)
      if (out.some((p) => p.key === key)) return yield* usage(`${flag} ${key}: given more than once`)
      out.push({ key, raw: raw.slice(eq + 1), value: parseValue(raw.slice(eq + 1)) })
    }
    return out
  })

// ---------------------------------------------------------------------------------------------
// Tables

const cell = (v: unknown): string =>
  v === undefined || v === null || v === "" ? "-" : typeof v === "string" ? v : JSON.stringify(v)

/**
 * A whitespace run that holds a line break becomes one space. `\s+` takes each run whole (no
 * backtracking); `\s*\n\s*` was quadratic on a long run of spaces without one.
 */
export const oneLine = (s: string): string => s.replace(/\s+/g, (run) => (run.includes("\n") ? " " : run))

/** Columns padded to their widest cell; `(none)` for no rows. */
export const table = (
  columns: ReadonlyArray<readonly [header: string, get: (row: any) => unknown]>,
  rows: ReadonlyArray<unknown>
): Effect.Effect<void> => {
  if (rows.length === 0) return line("(none)")
  const cells = rows.map((r) => columns.map(([, get]) => oneLine(cell(get(r)))))
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const render = (cs: ReadonlyArray<string>) => cs.map((c, i) => (i === cs.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")
  return line([render(columns.map(([h]) => h)), ...cells.map(render)].join("\n"))
}

/** `key  value` lines with the keys aligned. */
export const fields = (pairs: ReadonlyArray<readonly [string, unknown]>): Effect.Effect<void> => {
  const width = Math.max(...pairs.map(([k]) => k.length))
  return line(pairs.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join("\n"))
}

export const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`)

export const formatBytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`
