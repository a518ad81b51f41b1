/**
 * Who acts: how the edge in front of the gateway names the actor of a request (README "Identity:
 * who acts"). Both ways are off by default; read once at start, and a half-configured set-up
 * refuses to start naming what is missing.
 *
 * - SVC_ACTOR_HEADER: a request header the authenticating proxy sets; its value is the actor.
 *   SVC_ACTOR_REQUIRED (default true) refuses writes that do not carry it (401).
 * - SVC_JWT_JWKS (+ SVC_JWT_ISSUER, SVC_JWT_AUDIENCE, SVC_JWT_ACTOR_CLAIM, SVC_JWT_TENANT_CLAIM,
 *   SVC_JWT_MAX_AGE): every /v1 request but health needs a bearer JWT verified against those
 *   keys (an https URL, a file, or http on loopback only); the actor is its claim. With both
 *   set, the token wins and the header is not read.
 * - SVC_GROUPS_HEADER (with the actor header) or SVC_JWT_GROUPS_CLAIM: the actor's groups, which
 *   a step's `assignees` may name as group:<name> (src/domain/assignment.ts).
 */
import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { isAbsolute, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { allSettings } from "./allSettings.js"
import { intSetting } from "./read.js"
import { quoted } from "../lib/quoted.js"
import { defaultOf } from "./settings.js"

export interface ActorHeaderSettings {
  /** The header's name, lower case. */
  readonly name: string
  /** Writes (POST, PUT, PATCH, DELETE on /v1) without it answer 401. */
  readonly required: boolean
}

export type JwksSource =
  | { readonly _tag: "Url"; readonly url: URL }
  | { readonly _tag: "File"; readonly path: string }

export interface JwtSettings {
  readonly jwks: JwksSource
  /** The `iss` every token must carry. */
  readonly issuer: string
  /** Accepted `aud` values (a token must name one of them). */
  readonly audience: ReadonlyArray<string>
  /** The claim that names the actor. */
  readonly actorClaim: string
  /** When set, the claim that must equal the slug of the tenant this process serves (403 otherwise). */
  readonly tenantClaim: string | undefined
  /** When set, the claim naming the actor's groups (an array of strings, or a comma list). */
  readonly groupsClaim?: string | undefined
  /** A fetch of a remote key set is abandoned after this long. */
  readonly fetchTimeoutMs: number
  /**
   * Least time between two reloads of the key set caused by a token whose key it does not hold
   * (a rotation): a flood of tokens with made-up key ids costs at most one reload per period.
   */
  readonly cooldownMs: number
  /**
   * The longest a token may be valid for: `exp` minus `iat` (minus now, for a token without
   * `iat`), in seconds. A token minted for longer (a leaked one would stay good) is refused.
   */
  readonly maxAgeSeconds: number
}

/** SVC_JWT_MAX_AGE's default: a day (access tokens are typically minutes to an hour). */
export const DEFAULT_JWT_MAX_AGE_SECONDS = defaultOf("SVC_JWT_MAX_AGE")

export interface IdentitySettings {
  /** The actor header (ignored when `jwt` is set: the token wins). */
  readonly header: ActorHeaderSettings | undefined
  /** The header naming the actor's groups, a comma list (with the actor header; lower case). */
  readonly groupsHeader?: string | undefined
  readonly jwt: JwtSettings | undefined
}

export const IDENTITY_OFF: IdentitySettings = { header: undefined, jwt: undefined }

/** A value in the banner: bare when plain visible ASCII, else quoted (a line break cannot fake a line). */
const plain = (value: string) => /^[\x21-\x7e]{1,200}$/.test(value) ? value : show(value)

/** Which identity mode is on, in the words of the start-up banner. */
export const describeIdentity = (identity: IdentitySettings): string => {
  const { header, jwt } = identity
  if (jwt !== undefined) {
    const keys = jwt.jwks._tag === "Url" ? jwt.jwks.url.href : jwt.jwks.path
    return `bearer JWTs (SVC_JWT_JWKS ${plain(keys)}, issuer ${plain(jwt.issuer)}); the actor is claim ${plain(jwt.actorClaim)}` +
      (jwt.tenantClaim === undefined ? "" : `, the tenant claim ${plain(jwt.tenantClaim)}`)
  }
  if (header !== undefined) {
    return `the actor header ${header.name} (SVC_ACTOR_HEADER), set by the proxy in front; ` +
      (header.required ? "writes without it answer 401" : "optional (SVC_ACTOR_REQUIRED=false)") +
      (identity.groupsHeader === undefined ? "" : `; groups in ${identity.groupsHeader}`)
  }
  return "off: nobody is named and claims are refused (set SVC_ACTOR_HEADER or SVC_JWT_JWKS)"
}

/** RFC 9110 token: the characters a header name may have. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Headers that carry credentials or framing, never a name. */
const NOT_AN_ACTOR_HEADER = new Set(["authorization", "proxy-authorization", "cookie", "host", "content-length", "content-type", "transfer-encoding"])
/** A JWT claim name as used here: a top-level member. */
const CLAIM = /^[\x21-\x7e]{1,64}$/

/** A problem as failStart prints it: `NAME="value": ...` or `NAME is ...`. */
const invalid = (name: string, message: string): SchemaIssue.Issue =>
  new SchemaIssue.InvalidValue({ message: `${name}${message.startsWith("=") ? "" : " "}${message}` })

const show = (value: string) => quoted(value)

/** A loopback host name of a URL (`URL.hostname`: IPv6 in brackets). */
const isLoopbackHost = (hostname: string): boolean => {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return h === "localhost" || h.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(h) || h === "::1" ||
    /^::ffff:(127\.|7f[0-9a-f]{2}:)/.test(h)
}

const jwksSource = (value: string): Result.Result<JwksSource, string> => {
  if (/^https?:\/\//i.test(value)) {
    let url: URL
    try {
      url = new URL(value)
    } catch {
      return Result.fail(`=${show(value)}: expected an https URL or a file path`)
    }
    // Keys fetched over plain http can be swapped on the way, and with them every identity.
    // A key server on this machine's loopback is not on any way.
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      return Result.fail(
        `=${show(value)}: expected an https URL or a file path (plain http lets anyone on the way replace the keys; ` +
          "it is accepted on a loopback address only)"
      )
    }
    return Result.succeed({ _tag: "Url", url })
  }
  if (/^file:/i.test(value)) {
    try {
      return Result.succeed({ _tag: "File", path: fileURLToPath(value) })
    } catch {
      return Result.fail(`=${show(value)}: expected a file: URL of a local file`)
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return Result.fail(`=${show(value)}: expected an https URL or a file path`)
  return Result.succeed({ _tag: "File", path: isAbsolute(value) ? value : resolve(value) })
}

const text = (name: string) => Config.option(Config.String(name).pipe(Config.map((s) => s.trim())))

export const identityConfigFromEnv: Config.Config<IdentitySettings> = allSettings({
  header: text("SVC_ACTOR_HEADER"),
  required: Config.option(Config.Boolean("SVC_ACTOR_REQUIRED")),
  jwks: text("SVC_JWT_JWKS"),
  issuer: text("SVC_JWT_ISSUER"),
  audience: text("SVC_JWT_AUDIENCE"),
  actorClaim: text("SVC_JWT_ACTOR_CLAIM"),
  tenantClaim: text("SVC_JWT_TENANT_CLAIM"),
  groupsClaim: text("SVC_JWT_GROUPS_CLAIM"),
  groupsHeader: text("SVC_GROUPS_HEADER"),
  fetchTimeoutMs: intSetting("SVC_JWT_JWKS_TIMEOUT_MS"),
  cooldownMs: intSetting("SVC_JWT_JWKS_COOLDOWN_MS"),
  maxAgeSeconds: intSetting("SVC_JWT_MAX_AGE")
}).pipe(
  Config.mapEffect((raw): Effect.Effect<IdentitySettings, Config.ConfigError> => {
    const problems: Array<SchemaIssue.Issue> = []
    const set = (o: Option.Option<string>) => Option.filter(o, (s) => s !== "")

    let header: ActorHeaderSettings | undefined
    const headerName = set(raw.header)
    if (Option.isSome(headerName)) {
      const name = headerName.value.toLowerCase()
      if (!HEADER_NAME.test(name)) problems.push(invalid("SVC_ACTOR_HEADER", `=${show(headerName.value)}: expected a header name, e.g. x-forwarded-email`))
      else if (NOT_AN_ACTOR_HEADER.has(name)) problems.push(invalid("SVC_ACTOR_HEADER", `=${show(headerName.value)}: that header carries credentials or framing, not a name`))
      else header = { name, required: Option.getOrElse(raw.required, () => true) }
    }

    let jwt: JwtSettings | undefined
    const jwks = set(raw.jwks)
    const rest = {
      issuer: set(raw.issuer),
      audience: set(raw.audience),
      actorClaim: set(raw.actorClaim),
      tenantClaim: set(raw.tenantClaim),
      groupsClaim: set(raw.groupsClaim)
    }
    let groupsHeader: string | undefined
    const groupsName = set(raw.groupsHeader)
    if (Option.isSome(groupsName)) {
      const name = groupsName.value.toLowerCase()
      if (!HEADER_NAME.test(name)) problems.push(invalid("SVC_GROUPS_HEADER", `=${show(groupsName.value)}: expected a header name, e.g. x-forwarded-groups`))
      else if (NOT_AN_ACTOR_HEADER.has(name) || name === header?.name) problems.push(invalid("SVC_GROUPS_HEADER", `=${show(groupsName.value)}: that header cannot carry the groups`))
      else if (header === undefined) problems.push(invalid("SVC_GROUPS_HEADER", "is set, but SVC_ACTOR_HEADER is not: groups are read with the actor header (with SVC_JWT_JWKS, use SVC_JWT_GROUPS_CLAIM)"))
      else groupsHeader = name
    }
    if (Option.isNone(jwks)) {
      const stray = Object.entries({
        SVC_JWT_ISSUER: rest.issuer,
        SVC_JWT_AUDIENCE: rest.audience,
        SVC_JWT_ACTOR_CLAIM: rest.actorClaim,
        SVC_JWT_TENANT_CLAIM: rest.tenantClaim,
        SVC_JWT_GROUPS_CLAIM: rest.groupsClaim
      }).filter(([, v]) => Option.isSome(v)).map(([k]) => k)
      if (stray.length > 0) {
        problems.push(invalid("SVC_JWT_JWKS", `is not set, but ${stray.join(", ")} ${stray.length === 1 ? "is" : "are"}: set SVC_JWT_JWKS (a JWKS URL or file) to verify bearer tokens, or unset ${stray.length === 1 ? "it" : "them"}`))
      }
    } else {
      const source = jwksSource(jwks.value)
      if (Result.isFailure(source)) problems.push(invalid("SVC_JWT_JWKS", source.failure))
      if (Option.isNone(rest.issuer)) problems.push(invalid("SVC_JWT_ISSUER", "is required with SVC_JWT_JWKS: the issuer (iss) every token must name"))
      if (Option.isNone(rest.audience)) problems.push(invalid("SVC_JWT_AUDIENCE", "is required with SVC_JWT_JWKS: the audience (aud) a token must name, a comma list for several"))
      const audience = Option.getOrElse(rest.audience, () => "").split(",").map((a) => a.trim()).filter((a) => a !== "")
      if (Option.isSome(rest.audience) && audience.length === 0) problems.push(invalid("SVC_JWT_AUDIENCE", `=${show(rest.audience.value)}: expected one audience or a comma list`))
      for (
        const [name, claim] of [
          ["SVC_JWT_ACTOR_CLAIM", rest.actorClaim],
          ["SVC_JWT_TENANT_CLAIM", rest.tenantClaim],
          ["SVC_JWT_GROUPS_CLAIM", rest.groupsClaim]
        ] as const
      ) {
        if (Option.isSome(claim) && !CLAIM.test(claim.value)) problems.push(invalid(name, `=${show(claim.value)}: expected a claim name, e.g. sub or email`))
      }
      if (Result.isSuccess(source) && Option.isSome(rest.issuer) && audience.length > 0) {
        jwt = {
          jwks: source.success,
          issuer: rest.issuer.value,
          audience,
          actorClaim: Option.getOrElse(rest.actorClaim, () => "sub"),
          tenantClaim: Option.getOrUndefined(rest.tenantClaim),
          groupsClaim: Option.getOrUndefined(rest.groupsClaim),
          fetchTimeoutMs: raw.fetchTimeoutMs,
          cooldownMs: raw.cooldownMs,
          maxAgeSeconds: raw.maxAgeSeconds
        }
      }
    }

    if (Option.contains(raw.required, true) && header === undefined && Option.isNone(headerName) && Option.isNone(jwks)) {
      problems.push(invalid("SVC_ACTOR_REQUIRED", "is true, but nothing names the actor: set SVC_ACTOR_HEADER (or SVC_JWT_JWKS)"))
    }

    if (Arr.isArrayNonEmpty(problems)) {
      const issue = problems.length === 1 ? problems[0] : new SchemaIssue.Composite(Schema.Unknown.ast, problems, raw)
      return Effect.fail(new Config.ConfigError(new Schema.SchemaError(issue)))
    }
    return Effect.succeed({ header, jwt, ...(groupsHeader !== undefined ? { groupsHeader } : {}) })
  })
)

export class IdentityConfig extends Context.Service<IdentityConfig, IdentitySettings>()("config/IdentityConfig") {
  static readonly fromEnv = Layer.effect(IdentityConfig, identityConfigFromEnv)
  static readonly make = (settings: IdentitySettings) => Layer.succeed(IdentityConfig, settings)
}
