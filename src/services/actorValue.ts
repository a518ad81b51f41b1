/**
 * What an actor may be, wherever it comes from (the edge's actor header, a JWT claim, the
 * `x-svc-actor` header an HTTP workspace receives), and how it travels in a header.
 *
 * An actor is visible text: 1 to MAX_ACTOR_LENGTH characters, no control, format or
 * default-ignorable characters (bidirectional overrides, variation selectors, the combining
 * grapheme joiner, Hangul fillers, the Braille blank included), no surrogate halves, no leading or trailing space. The
 * prefix `agent:` is the agent tool server's (`agent:<uuid>`, src/mcp): the edge cannot name an
 * actor that reads as an agent. Nothing is ever cut or cleaned: a bad value is refused.
 */
import { type Identity, MAX_ACTOR_LENGTH } from "./Actor.js"
import { charCount } from "../api/textLength.js"

/** The prefix of the actors the agent tool server names; refused from the edge. */
export const AGENT_ACTOR_PREFIX = "agent:"

/** The prefix of a group in a step's assignees; refused as an actor. */
export const GROUP_ACTOR_PREFIX = "group:"

// Cc controls, Cf format (bidi overrides, zero-width), Zl/Zp separators, Cs lone surrogates,
// Co private use, Cn unassigned: none is visible text. Default_Ignorable_Code_Point adds what
// renders as nothing though it is not Cf (variation selectors, the combining grapheme joiner,
// Hangul fillers); U+2800 BRAILLE PATTERN BLANK renders as a space. Two people told apart only
// by such a character would look like one. One character class: linear time.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u2800]/u
const EDGE_SPACE = /^\s|\s$/u

/** Why `value` is not an actor (a phrase), or undefined when it is one. */
export const actorProblem = (value: string, options: { readonly agentAllowed?: boolean } = {}): string | undefined => {
  if (value.length === 0) return "is empty"
  // Characters as README counts them (code points): an emoji is one, not two UTF-16 units.
  const length = value.length > MAX_ACTOR_LENGTH ? charCount(value) : value.length
  if (length > MAX_ACTOR_LENGTH) return `is ${length} characters long; at most ${MAX_ACTOR_LENGTH} are accepted`
  if (INVISIBLE.test(value)) return "holds a control or invisible character"
  if (EDGE_SPACE.test(value)) return "starts or ends with white space"
  // In any case or compatibility form: `Agent:<uuid>` reads as an agent too.
  if (options.agentAllowed !== true && value.normalize("NFKC").toLowerCase().startsWith(AGENT_ACTOR_PREFIX)) {
    return `starts with "${AGENT_ACTOR_PREFIX}", which names agents of the tool server only`
  }
  // A runbook step names groups as group:<name>: a person so named would read as the group.
  if (value.normalize("NFKC").toLowerCase().startsWith(GROUP_ACTOR_PREFIX)) {
    return `starts with "${GROUP_ACTOR_PREFIX}", which names groups in a step's assignees`
  }
  return undefined
}

/**
 * Why `value` is not a person an edge could name (a phrase), or undefined: an actor without a
 * comma, which is how a proxy joins two copies of its header (src/gateway/identity.ts). A
 * decision link's person must be one, or its link could never be opened behind a login.
 */
export const personProblem = (value: string): string | undefined =>
  value.includes(",") ? "holds a comma: an edge names one person, and joins two copies of its header with one" : actorProblem(value)

const fatalUtf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * A request header's value as text. Node hands header bytes over one character per byte
 * (latin1); a proxy sends a non-ASCII name as UTF-8 bytes, so a value with bytes above 0x7f is
 * read as UTF-8. Undefined when those bytes are not UTF-8.
 */
export const headerText = (raw: string): string | undefined => {
  if (!/[^\x00-\x7f]/.test(raw)) return raw
  try {
    return fatalUtf8.decode(Buffer.from(raw, "latin1"))
  } catch {
    return undefined
  }
}

/**
 * The actor as a header value: printable ASCII as is (`jane@example.com`, `agent:<uuid>`),
 * `%` and every other character percent-encoded as UTF-8. Header values carry bytes, not text.
 */
export const encodeActorHeader = (actor: string): string =>
  actor.replace(/[^\x20-\x24\x26-\x7e]+/gu, (run) => encodeURIComponent(run))

/** The actor a header value sent by encodeActorHeader names; undefined when malformed. */
export const decodeActorHeader = (wire: string): string | undefined => {
  try {
    return decodeURIComponent(wire)
  } catch {
    return undefined
  }
}

/**
 * A header value as text for a client that sends it (the CLI): Node writes a header string one
 * byte per character, so the UTF-8 bytes of the text go as latin1 characters (read back by
 * `headerText`).
 */
export const headerBytes = (text: string): string => Buffer.from(text, "utf8").toString("latin1")

/** The identity (groups, enforcement) as a header value: percent-encoded JSON. */
export const encodeIdentityHeader = (identity: Identity): string =>
  encodeURIComponent(JSON.stringify({ groups: identity.groups, enforced: identity.enforced }))

/** The identity a header value sent by encodeIdentityHeader names; undefined when malformed. */
export const decodeIdentityHeader = (wire: string): Identity | undefined => {
  try {
    const v = JSON.parse(decodeURIComponent(wire)) as { groups?: unknown; enforced?: unknown }
    if (typeof v !== "object" || v === null || typeof v.enforced !== "boolean" || !Array.isArray(v.groups)) return undefined
    if (v.groups.length > MAX_GROUPS || !v.groups.every((g) => typeof g === "string" && groupProblem(g) === undefined)) return undefined
    return { groups: v.groups as Array<string>, enforced: v.enforced }
  } catch {
    return undefined
  }
}

/** Most groups read from the edge for one request. */
export const MAX_GROUPS = 100

/** Why `value` is not a group name (a phrase), or undefined: visible text like an actor, no comma. */
export const groupProblem = (value: string): string | undefined => {
  if (value.includes(",")) return "holds a comma"
  return actorProblem(value, { agentAllowed: false })
}
