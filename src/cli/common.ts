/**
 * What every command shares: the root command with the flags shared by all (`--url` / SVC_URL,
 * `--admin-url` / SVC_ADMIN_URL, `--json`) and the global `--actor` / `--actor-header`; the
 * secrets from the environment (SVC_TOKEN, SVC_ADMIN_TOKEN); the clients built from them; the
 * typed flags and arguments whose usage errors name the flag and the value; output helpers; the
 * two failures the CLI raises itself (a usage error: exit 2; a local failure: exit 1).
 */
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import * as Param from "effect/cli/Param"
import * as Config from "effect/Config"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { statSync } from "node:fs"
import { type GatewayClient, makeGatewayClient, makeRegistryClient, type RegistryClient } from "../client/index.js"
import { NotFound } from "../api/errors.js"
import { TaskId, Uuid } from "../api/ids.js"
import { actorProblem, headerBytes } from "../services/actorValue.js"
import { inexactNumberProblem } from "../api/jsonNumbers.js"
import { parseJson } from "../api/jsonParse.js"
import { firstWhere } from "../api/jsonValue.js"

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

const url = Flag.String("url").pipe(
  Flag.withFallbackConfig(Config.String("SVC_URL")),
  Flag.withDefault(DEFAULT_URL),
  Flag.withDescription(`Base URL of the gateway (default: SVC_URL, else ${DEFAULT_URL})`)
)

const adminUrl = Flag.String("admin-url").pipe(
  Flag.withFallbackConfig(Config.String("SVC_ADMIN_URL")),
  Flag.withDefault(DEFAULT_ADMIN_URL),
  Flag.withDescription(
    `Base URL of the admin listener serving the agent registry: the embedded gateway's SVC_ADMIN_PORT, or a ` +
      `workspace service (default: SVC_ADMIN_URL, else ${DEFAULT_ADMIN_URL}). SVC_ADMIN_TOKEN, when set, is sent as ` +
      `its bearer token`
  )
)

/** A secret from the environment only (a flag would show in the process list); empty counts as unset. */
export const secretEnv = (name: string) =>
  Config.map(
    Config.option(Config.Redacted(name)),
    Option.filter((value) => Redacted.value(value) !== "")
  )

const adminToken = secretEnv("SVC_ADMIN_TOKEN")

/** A boolean flag: false unless given. */
export const booleanFlag = (name: string) => Flag.Boolean(name).pipe(Flag.withDefault(false))

const json = booleanFlag("json").pipe(Flag.withDescription("Print JSON (for scripts) instead of tables"))

// Who acts, for a gateway behind an edge that names the actor (README "Identity: who acts").
// Global flags rather than shared ones: a command's own flag of the same name wins where it
// stands after that command (`svc links create <task> --actor <email>` names the link's person).
export const actor = GlobalFlag.Setting("actor")({
  flag: Flag.String("actor").pipe(
    Flag.withFallbackConfig(Config.String("SVC_ACTOR")),
    Flag.optional,
    Flag.withDescription("Gateway commands: who acts, sent in the --actor-header header (default: SVC_ACTOR)")
  )
})

export const actorHeader = GlobalFlag.Setting("actor-header")({
  flag: Flag.String("actor-header").pipe(
    Flag.withFallbackConfig(Config.String("SVC_ACTOR_HEADER")),
    Flag.optional,
    Flag.withDescription("The header the gateway reads the actor from (default: SVC_ACTOR_HEADER, the gateway's setting)")
  )
})

/** A bearer token for a gateway that verifies JWTs (SVC_JWT_JWKS); environment only, like SVC_ADMIN_TOKEN. */
const bearerToken = secretEnv("SVC_TOKEN")

/**
 * The flags every command shares, declared once on the root command: effect/cli takes them
 * before or after the command's words (`svc --json tasks list <id>`, `svc tasks list <id> --json`).
 */
const sharedConfig = { url, adminUrl, json }

export const root = Command.make("svc", {}, () =>
  // The root run alone: app.ts names its commands in the usage error.
  Effect.fail(new CliError.ShowHelp({ commandPath: ["svc"], errors: [] }))).pipe(
    Command.withSharedFlags(sharedConfig)
  )

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** The headers every call to the gateway carries: the actor (in its header) and SVC_TOKEN, when given. */
const edgeHeaders = (common: { readonly actor: Option.Option<string>; readonly actorHeader: Option.Option<string> }) =>
  Effect.gen(function*() {
    const headers: Record<string, string> = {}
    const token = yield* bearerToken.pipe(Effect.catch((e) => usage(`SVC_TOKEN: ${e.message}`)))
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
    return usage(`${flag}: ${quoted(value)} is not an http(s) URL`)
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
  args: Command.Command.Config.Infer<C>,
  ctx: X
) => Effect.Effect<void, E, R>

/** The flags each leaf command takes itself (`--field`, `-m`): what a mistyped flag is matched against. */
const leafFlags = new WeakMap<object, ReadonlyArray<string>>()

export const commandFlags = (command: Command.Command.Any): ReadonlyArray<string> => leafFlags.get(command) ?? []

/** The flag a param parses: a Single, or a wrapper (Map, Transform, Optional, Variadic) of one. */
const singleOf = (param: Param.Any): Param.Single<Param.ParamKind, unknown> =>
  Param.isSingle(param) ? param : singleOf((param as Param.Optional<Param.ParamKind, unknown>).param)

const flagNames = (config: Command.Command.Config | Record<string, Param.Any>): Array<string> =>
  Object.values(config).flatMap((value): Array<string> => {
    if (!Param.isParam(value)) return flagNames(value as Command.Command.Config)
    const single = singleOf(value)
    return single.kind === "flag" ? [single.name, ...single.aliases].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)) : []
  })

/** Every flag the root shares or declares global, with its aliases. */
export const sharedFlagNames = () => flagNames({ ...sharedConfig, actor: actor.flag, actorHeader: actorHeader.flag })

/** Those of them that take a value (`--url <url>`), unlike `--json`. */
export const sharedValueFlags = () =>
  Object.values({ ...sharedConfig, actor: actor.flag, actorHeader: actorHeader.flag })
    .map(singleOf)
    .filter((single) => single.primitiveType._tag !== "Boolean")
    .map((single) => `--${single.name}`)

/** A leaf command: its own `config`, its handler given the parsed `config` and the root's shared flags. */
const leaf = <const Name extends string, const C extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: C,
  handler: (common: Command.Command.Config.Infer<typeof sharedConfig>, args: Command.Command.Config.Infer<C>) => Effect.Effect<void, E, R>
) => {
  const command = Command.make(name, config, (args) => Effect.flatMap(root, (common) => handler(common, args))).pipe(
    Command.withDescription(description)
  )
  leafFlags.set(command, flagNames(config))
  return command
}

/** A leaf command talking to the gateway: its own args/options plus --url and --json. */
export const gatewayCommand = <const Name extends string, const C extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: C,
  handler: Handler<C, Ctx, E, R>
) =>
  leaf(name, description, config, (common, args) =>
    Effect.flatMap(Effect.flatMap(Effect.all({ actor, actorHeader }), edgeHeaders), (headers) =>
      withHeaders(headers)(Effect.flatMap(makeCtx(common), (ctx) => handler(args, ctx)))))

/** A leaf command talking to the agent registry on the admin listener: --admin-url and --json. */
export const registryCommand = <const Name extends string, const C extends Command.Command.Config, E, R>(
  name: Name,
  description: string,
  config: C,
  handler: Handler<C, RegistryCtx, E, R>
) =>
  leaf(name, description, config, (common, args) =>
    Effect.gen(function*() {
      const adminUrl = yield* checkUrl("--admin-url", common.adminUrl)
      const token = yield* adminToken.pipe(Effect.catch((e) => usage(`SVC_ADMIN_TOKEN: ${e.message}`)))
      const registry = yield* makeRegistryClient(adminUrl, { token: Option.getOrUndefined(token) })
      yield* handler(args, {
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
    }))

/**
 * A command that only groups subcommands: run without one, it is a usage error naming them.
 */
export const group = <const Name extends string, const Subs extends readonly [Command.Command.Any, ...Array<Command.Command.Any>]>(
  name: Name,
  description: string,
  subcommands: Subs,
  path = `svc ${name}`
) =>
  Command.make(name, {}, () =>
    usage(`${path === "svc" ? "missing command" : `'${path}' needs a command`}: one of ${subcommands.map((c) => c.name).join(", ")}`)
  ).pipe(Command.withDescription(description), Command.withSubcommands(subcommands))

// ---------------------------------------------------------------------------------------------
// Typed flags and arguments. Each check is a filter whose message is the whole usage error
// (app.ts prints an invalid value's message as it is), in the words the CLI has always used.

/** A string argument that must satisfy `is`. */
const checkedArg = (name: string, is: (s: string) => boolean, problem: (s: string) => string) =>
  Argument.String(name).pipe(Argument.filter(is, problem))

const uuidArg = (name: string) =>
  checkedArg(name, Schema.is(Uuid), (s) => `<${name}>: ${quoted(s)} is not a UUID`).pipe(
    Argument.withDescription(`${name} (a UUID)`)
  )

export const entityIdArg = uuidArg("entityId")
export const documentRefArg = uuidArg("documentRef")
export const rowIdArg = uuidArg("rowId")
export const agentIdArg = uuidArg("agentId")

export const taskIdArg = checkedArg(
  "taskId",
  Schema.is(TaskId),
  (s) => `<taskId>: ${quoted(s)} is not a task id (a UUID, or <uuid>:<step>:<slug>)`
).pipe(Argument.withDescription("Task id: a UUID, or a child workflow's <uuid>:<step>:<slug>"))

/**
 * Characters a terminal acts on or that reorder or hide text (C0 but the line break, DEL, C1,
 * the bidirectional and other invisible format characters, line and paragraph separators).
 */
const UNSAFE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\p{Cf}\u2028\u2029]/gu

/** `text` with the characters a terminal would act on written as `\u....` escapes. */
export const terminalSafe = (text: string) =>
  text.replace(UNSAFE, (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, "0")}`)

/** A value as the user gave it: quoted, clipped to 64 characters, what a terminal acts on escaped. */
export const quoted = (value: string) => {
  const chars = Array.from(value)
  return terminalSafe(JSON.stringify(chars.length > 64 ? `${chars.slice(0, 63).join("")}…` : value))
}

/** What is wrong with a local file to read, in words; undefined when it is a regular file. */
export const fileProblem = (path: string): string | undefined => {
  try {
    const stat = statSync(path)
    return stat.isFile() ? undefined : stat.isDirectory() ? "is a directory, not a file" : "is not a regular file"
  } catch (e) {
    return fileErrorWords(e)
  }
}

/** Node's file error in words (`ENOENT` -> "does not exist"). */
export const fileErrorWords = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException).code
  switch (code) {
    case "ENOENT":
      return "does not exist"
    case "ENOTDIR":
      return "does not exist (a part of its path is not a directory)"
    case "EACCES":
    case "EPERM":
      return "cannot be read (permission denied)"
    case "EISDIR":
      return "is a directory, not a file"
    case "ENAMETOOLONG":
      return "is too long a path"
    default:
      return `cannot be read (${code ?? (e as Error).message})`
  }
}

/** The usage error of a local file `what` names (`<path>`, `--config-file`) that could not be read. */
export const unreadable = (what: string, path: string, e: unknown) =>
  new UsageError({ message: `${what}: ${quoted(path)} ${fileErrorWords(e)}` })

/** A local file path, as given, that must name a regular file one can read. */
export const fileArg = (name: string) =>
  Argument.String(name).pipe(
    Argument.filterMap(
      (s) => fileProblem(s) === undefined ? Option.some(s) : Option.none(),
      (s) => `<${name}>: ${quoted(s)} ${fileProblem(s) ?? "cannot be read"}`
    ),
    Argument.withDescription("A local file")
  )

const oneOf = <const Choices extends ReadonlyArray<string>>(choices: Choices) => (s: string): Option.Option<Choices[number]> =>
  choices.includes(s) ? Option.some(s as Choices[number]) : Option.none()

const notOneOf = (name: string, choices: ReadonlyArray<string>) => (s: string) =>
  `${name}: ${quoted(s)} is not one of ${choices.join(", ")}`

/** An argument taking one of `choices`. */
export const choiceArg = <const Choices extends ReadonlyArray<string>>(name: string, choices: Choices) =>
  Argument.String(name).pipe(
    Argument.filterMap(oneOf(choices), notOneOf(`<${name}>`, choices)),
    Argument.withDescription(`One of ${choices.join(", ")}`)
  )

/** A flag taking one of `choices`. */
export const choiceFlag = <const Choices extends ReadonlyArray<string>>(name: string, choices: Choices) =>
  Flag.String(name).pipe(Flag.filterMap(oneOf(choices), notOneOf(`--${name}`, choices)))

/** A flag taking an integer. */
export const integerFlag = (name: string) =>
  Flag.String(name).pipe(
    Flag.filterMap(
      (s) => /^\s*[+-]?\d+\s*$/.test(s) ? Option.some(Number(s)) : Option.none(),
      (s) => `--${name}: ${quoted(s)} is not an integer`
    )
  )

/** A flag taking a number. */
export const floatFlag = (name: string) =>
  Flag.String(name).pipe(
    Flag.filterMap(
      (s) => s.trim() !== "" && Number.isFinite(Number(s)) ? Option.some(Number(s)) : Option.none(),
      (s) => `--${name}: ${quoted(s)} is not a number`
    )
  )

// ---------------------------------------------------------------------------------------------
// Payload checks: a body the contract refuses is a usage error, reported before sending.

/** Schema's messages in the words the CLI has always printed: `Expected X, actual V`, `is missing`. */
const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    const message = SchemaIssue.defaultLeafHook(issue)
    return issue._tag === "MissingKey" && message === "Missing key" ? "is missing" : message
  }
})

const pathText = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined) =>
  (path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p)).join(".")

export const checkPayload = <A>(schema: Schema.Decoder<A>, value: unknown, what: string) =>
  Schema.decodeUnknownEffect(schema)(value, { errors: "first" }).pipe(
    Effect.mapError((e) => {
      const text = formatIssue(e.issue).issues
        .map((i) => {
          const message = i.message.startsWith("Expected ") ? i.message.replace(/, got /, ", actual ") : i.message
          const path = pathText(i.path)
          return path !== "" ? `${path}: ${message}` : message
        })
        .join("; ")
      return new UsageError({ message: `${what}: ${text}` })
    })
  )

// ---------------------------------------------------------------------------------------------
// Values given as text: JSON when the text parses as JSON, else the text itself.

/** `raw` as JSON when it parses, else the text; `inexact`: what to say of a number the parse changed. */
const readValue = (raw: string): { readonly value: unknown; readonly inexact?: string } => {
  let value: unknown
  try {
    value = parseJson(raw)
  } catch {
    return { value: raw }
  }
  const problem = inexactNumberProblem(raw, firstWhere)
  // A value that is the number itself has the request body's root path ("body"): here it is the flag's.
  return problem === undefined ? { value } : { value, inexact: problem.replace(/^body: /, "") }
}

/**
 * `raw` as JSON when it parses, else the text. A number the parse would change (an integer past
 * 2^53: src/api/jsonNumbers.ts) is a usage error naming `what`: parsed, it would be sent, and
 * stored, as another number with no word said (quote it to send it as text).
 */
export const parseValue = (what: string, raw: string): Effect.Effect<unknown, UsageError> => {
  const read = readValue(raw)
  return read.inexact === undefined ? Effect.succeed(read.value) : usage(`${what}: ${read.inexact}`)
}

/**
 * Parses `key=value` flags; the value is JSON when it parses, else a string. A number the parse
 * changed is marked `inexact` (the message), not refused here: a string-typed start parameter
 * takes the text as typed (src/cli/startParams.ts), any other use refuses it.
 */
export const parseKeyValues = (flag: string, raws: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const out: Array<{ key: string; raw: string; value: unknown }> = []
    for (const raw of raws) {
      const eq = raw.indexOf("=")
      if (eq <= 0) return yield* usage(`${flag} "${raw}": expected key=value`)
      const key = raw.slice(0, eq)
      if (out.some((p) => p.key === key)) return yield* usage(`${flag} ${key}: given more than once`)
      out.push({ key, raw: raw.slice(eq + 1), ...readValue(raw.slice(eq + 1)) })
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
  // Served text (a task's title) may hold what a terminal acts on (ESC, CSI, bidi controls): escaped.
  const cells = rows.map((r) => columns.map(([, get]) => terminalSafe(oneLine(cell(get(r))))))
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)))
  const render = (cs: ReadonlyArray<string>) => cs.map((c, i) => (i === cs.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")
  return line([render(columns.map(([h]) => h)), ...cells.map(render)].join("\n"))
}

/** `key  value` lines with the keys aligned. */
export const fields = (pairs: ReadonlyArray<readonly [string, unknown]>): Effect.Effect<void> => {
  const width = Math.max(...pairs.map(([k]) => k.length))
  return line(pairs.map(([k, v]) => `${k.padEnd(width)}  ${terminalSafe(cell(v))}`).join("\n"))
}

export const truncate = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, max - 1)}…`)

export const formatBytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`
