/**
 * When two actor names are one person: the one normalization the gateway compares people by.
 * Pure, no I/O; any module may reuse it.
 *
 * Two keys, for the two directions a comparison can err in:
 *
 * - `actorSkeleton(name)`, for refusals (four-eyes: "is the decider the same person as an
 *   earlier one?"). It errs towards "the same person". Exactly, in this order:
 *   1. NFKC (compatibility forms: full-width `ａ`, ligatures, a decomposed `ä` composed);
 *   2. case folding: `toUpperCase()` then `toLowerCase()` (so `ẞ`, `ß` and `SS` meet as `ss`);
 *   3. NFD;
 *   4. every Default_Ignorable_Code_Point (zero-width characters, joiners, variation selectors,
 *      the combining grapheme joiner, Hangul fillers, soft hyphen), every other format (Cf),
 *      control (Cc) character, and the blank-looking U+2800 BRAILLE PATTERN BLANK removed;
 *   5. every character of Unicode's confusables table (UTS #39, `confusables.txt`, through the
 *      `unhomoglyph` package's copy of it) replaced by its prototype (Cyrillic `а` → `a`, `rn` and
 *      `m` meet, `0`/`O`, `1`/`l`/`I`);
 *   6. NFD again, then lower case again (a prototype may be a capital).
 *   This is UTS #39's skeleton (steps 3 to 6) after case and compatibility folding.
 *
 * - `actorKey(name)`, for grants (assignment: "is this caller the named assignee?"). It must not
 *   let a look-alike through, so it only folds what is the same text: NFKC and case folding
 *   (steps 1 and 2). Actors with invisible or format characters never get this far: the edge's
 *   values are refused (src/services/actorValue.ts).
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

const fold = (name: string) => name.normalize("NFKC").toUpperCase().toLowerCase()

/** The key a person is granted by (an assignee, a claim holder): same text up to compatibility form and case. */
export const actorKey = (name: string): string => fold(name)

/** The key two people are told apart by for four-eyes (see the module comment): look-alikes meet. */
export const actorSkeleton = (name: string): string =>
  unhomoglyph(fold(name).normalize("NFD").replace(IGNORED, "")).normalize("NFD").toLowerCase()

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
