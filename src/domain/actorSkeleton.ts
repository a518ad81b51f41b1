/**
 * When two actor names are one person: the one normalization the gateway compares people by,
 * pure. Two keys, for the two directions a comparison can err in: `actorSkeleton` for refusals
 * (four-eyes: look-alikes meet, erring towards "the same person"), `actorKey` for grants
 * (assignment: only the same text meets, so no look-alike gets through).
 */
import { createRequire } from "node:module"

// The confusables table (a 6,000-key object and one regular expression of all its keys) is
// loaded by the first skeleton, not at start: a gateway that never compares two people keeps
// it out of memory (bench/RESULTS.md, memory per cell). `require` stays a call at run time in
// the bundle, resolved from node_modules like the native driver.
const requireLazily = createRequire(import.meta.url)
let confusables: ((s: string) => string) | undefined
const unhomoglyph = (s: string): string =>
  (confusables ??= requireLazily("unhomoglyph") as (s: string) => string)(s)

/** The prefix of the actors the agent tool server names (`agent:<uuid>`). */
export const AGENT_PREFIX = "agent:"

/** The prefix of a group in a step's `assignees` (`group:finance`). */
export const GROUP_PREFIX = "group:"

// Step 4: default-ignorable, format and control characters, and the Braille blank.
const IGNORED = /[\p{Default_Ignorable_Code_Point}\p{Cf}\p{Cc}\u2800]/gu

// Step 4: a dot above where the letter's own dot already is; the dot e-mail domains also read.
const SOFT_DOTTED_DOT = /(\p{Soft_Dotted})\u0307/gu
const IDEOGRAPHIC_FULL_STOP = /\u3002/g

const fold = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase()

/**
 * The key a person is granted by (an assignee, a claim holder): NFKC and case folding only (steps
 * 1 and 2 of `actorSkeleton`). Actors with invisible or format characters never get this far:
 * the edge's values are refused (src/services/actorValue.ts).
 */
export const actorKey = (name: string): string => fold(name)

/**
 * The key two people are told apart by for four-eyes. Exactly, in this order:
 *   1. NFKC (compatibility forms: full-width `ａ`, ligatures, a decomposed `ä` composed);
 *   2. case folding: `toUpperCase()` then `toLowerCase()` (so `ẞ`, `ß` and `SS` meet as `ss`);
 *   3. NFD;
 *   4. every Default_Ignorable_Code_Point (zero-width characters, joiners, variation selectors,
 *      the combining grapheme joiner, Hangul fillers, soft hyphen), every other format (Cf),
 *      control (Cc) character, and the blank-looking U+2800 BRAILLE PATTERN BLANK removed; a
 *      combining dot above on a letter that has its dot already (Soft_Dotted: `i̇` is drawn as
 *      `i`) removed; and the ideographic full stop `。` (what NFKC makes of `｡`), which e-mail
 *      domains read as a dot (IDNA), made a `.`;
 *   5. every character of Unicode's confusables table (UTS #39, `confusables.txt`, through the
 *      `unhomoglyph` package's copy of it) replaced by its prototype (Cyrillic `а` → `a`, `rn` and
 *      `m` meet, `0`/`O`, `1`/`l`/`I`);
 *   6. NFD again, then lower case again (a prototype may be a capital).
 *   This is UTS #39's skeleton (steps 3 to 6) after case and compatibility folding.
 */
export const actorSkeleton = (name: string): string =>
  unhomoglyph(
    fold(name).normalize("NFD").replace(IGNORED, "").replace(SOFT_DOTTED_DOT, "$1").replace(IDEOGRAPHIC_FULL_STOP, ".")
  ).normalize("NFD").toLowerCase()

/** Whether `actor` names an agent of the tool server (`agent:<uuid>`), in any case or form. */
export const isAgentActor = (actor: string): boolean => fold(actor).startsWith(AGENT_PREFIX)

/** The agent's registry id an `agent:<uuid>` actor names, lower case; undefined for a person. */
export const agentIdOf = (actor: string): string | undefined =>
  isAgentActor(actor) ? fold(actor).slice(AGENT_PREFIX.length) : undefined

/** Whether two actors are one person for four-eyes. An agent is never a named person, nor another agent. */
export const samePerson = (a: string, b: string): boolean => {
  const agentA = agentIdOf(a)
  const agentB = agentIdOf(b)
  if (agentA !== undefined || agentB !== undefined) return agentA !== undefined && agentA === agentB
  return actorSkeleton(a) === actorSkeleton(b)
}
