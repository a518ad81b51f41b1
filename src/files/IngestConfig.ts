/**
 * Settings of the file ingest providers (`local`, `url`), read once at start with Effect Config.
 *
 * | Setting                        | Default            | Meaning                                                   |
 * |--------------------------------|--------------------|-----------------------------------------------------------|
 * | SVC_LOCAL_INGEST_ROOT          | unset (disabled)   | absolute directory the `local` provider may read under    |
 * | SVC_INGEST_MAX_BYTES           | 52428800 (50 MiB)  | byte cap of one fetched file (`local` and `url`): 413     |
 * | SVC_INGEST_URL_ALLOW           | empty              | comma list of `host:port` the `url` provider may reach    |
 * |                                |                    | although they are private (on-premises sources, tests)    |
 * | SVC_INGEST_CONNECT_TIMEOUT_MS  | 5000               | DNS lookup + TCP connect of one hop                       |
 * | SVC_INGEST_TIMEOUT_MS          | 30000              | whole `url` fetch, all redirects and the body included    |
 * | SVC_INGEST_MAX_REDIRECTS       | 3                  | redirects followed; one more is refused (0 follows none)  |
 */
import * as Config from "effect/Config"
import { parseAllowEntry } from "../http/outbound/outboundGuard.js"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as path from "node:path"
import { defaultOf, type SettingName } from "../config/settings.js"
import { unsetWhenEmpty } from "../config/unsetWhenEmpty.js"

export interface IngestConfigShape {
  /** Directory the `local` provider is confined to; None disables the provider. */
  readonly localRoot: Option.Option<string>
  /** Files larger than this many bytes are refused with 413 (checked while reading/streaming). */
  readonly maxBytes: number
  /**
   * Normalized `host:port` pairs (WHATWG host form, IPv6 in brackets, explicit port) that the `url`
   * provider may reach even when they resolve to a private, loopback or link-local address.
   */
  readonly urlAllow: ReadonlyArray<string>
  readonly connectTimeoutMs: number
  readonly timeoutMs: number
  readonly maxRedirects: number
  /**
   * Ingests by `url` or `local` that fetch (and hold their bytes) at once; more wait up to 10 s
   * for a slot, then answer 503 with Retry-After. With SVC_INGEST_MAX_BYTES, it bounds the
   * memory fetched files take: 4 x 50 MiB by default.
   */
  readonly fetchesAtOnce: number
}

export const MiB = 1024 * 1024

export const ingestDefaults: IngestConfigShape = {
  localRoot: Option.none(),
  maxBytes: defaultOf("SVC_INGEST_MAX_BYTES"),
  urlAllow: [],
  connectTimeoutMs: defaultOf("SVC_INGEST_CONNECT_TIMEOUT_MS"),
  timeoutMs: defaultOf("SVC_INGEST_TIMEOUT_MS"),
  maxRedirects: defaultOf("SVC_INGEST_MAX_REDIRECTS"),
  fetchesAtOnce: defaultOf("SVC_INGEST_FETCHES_AT_ONCE")
}

/** Allow-list entries are parsed by the shared outbound guard (one normalization for every list). */
export { parseAllowEntry }

/** A setting refused with `message` (the value was found: withDefault does not replace it). */
export const invalidSetting = (message: string): Config.Config<never> =>
  Config.fail(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))

/** `self`, refused with `message` when `valid` says no. */
export const checkedSetting = <A>(self: Config.Config<A>, message: string, valid: (a: A) => boolean): Config.Config<A> =>
  Config.flatMap(self, (a) => (valid(a) ? Config.succeed(a) : invalidSetting(message)))

const positiveInt = (name: SettingName) =>
  checkedSetting(Config.Int(name), `${name} must be a positive integer`, (n) => n > 0).pipe(Config.withDefault(defaultOf(name)))

const urlAllowConfig: Config.Config<ReadonlyArray<string>> = Config.String("SVC_INGEST_URL_ALLOW").pipe(
  Config.withDefault(""),
  Config.flatMap((s): Config.Config<ReadonlyArray<string>> => {
    const out: Array<string> = []
    for (const part of s.split(",")) {
      if (part.trim() === "") continue
      const parsed = parseAllowEntry(part)
      if (Result.isFailure(parsed)) return invalidSetting(`SVC_INGEST_URL_ALLOW: ${parsed.failure}`)
      out.push(parsed.success)
    }
    return Config.succeed(out)
  })
)

export const ingestConfigFromEnv: Config.Config<IngestConfigShape> = Config.all({
  localRoot: unsetWhenEmpty("SVC_LOCAL_INGEST_ROOT").pipe(
    Config.flatMap((root) =>
      Option.isSome(root) && !path.isAbsolute(root.value)
        ? invalidSetting("SVC_LOCAL_INGEST_ROOT must be an absolute path")
        : Config.succeed(root)
    )
  ),
  maxBytes: positiveInt("SVC_INGEST_MAX_BYTES"),
  fetchesAtOnce: positiveInt("SVC_INGEST_FETCHES_AT_ONCE"),
  urlAllow: urlAllowConfig,
  connectTimeoutMs: positiveInt("SVC_INGEST_CONNECT_TIMEOUT_MS"),
  timeoutMs: positiveInt("SVC_INGEST_TIMEOUT_MS"),
  maxRedirects: checkedSetting(
    Config.Int("SVC_INGEST_MAX_REDIRECTS"),
    "SVC_INGEST_MAX_REDIRECTS must be an integer >= 0",
    (n) => n >= 0
  ).pipe(Config.withDefault(ingestDefaults.maxRedirects))
})

export interface IngestConfigInput extends Partial<Omit<IngestConfigShape, "localRoot">> {
  /** A plain string is accepted for convenience in tests. */
  readonly localRoot?: Option.Option<string> | string | undefined
}

export class IngestConfig extends Context.Service<IngestConfig, IngestConfigShape>()("files/IngestConfig") {
  static readonly fromEnv = Layer.effect(IngestConfig, ingestConfigFromEnv)

  /** The defaults overridden by `partial`; allow-list entries are normalized (throws on a bad one). */
  static readonly resolve = (partial: IngestConfigInput = {}): IngestConfigShape => {
    const { localRoot, urlAllow, ...rest } = partial
    return {
      ...ingestDefaults,
      ...rest,
      localRoot: localRoot === undefined
        ? ingestDefaults.localRoot
        : typeof localRoot === "string"
        ? Option.some(localRoot)
        : localRoot,
      urlAllow: (urlAllow ?? []).map((e) =>
        Result.getOrThrowWith(parseAllowEntry(e), (msg) => new Error(`IngestConfig.urlAllow: ${msg}`))
      )
    }
  }

  static readonly make = (partial: IngestConfigInput = {}) => Layer.succeed(IngestConfig, IngestConfig.resolve(partial))
}
