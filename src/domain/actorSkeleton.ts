/**
 * When two actor names are one person: the one normalization the gateway compares people by,
 * pure. Two keys, for the two directions a comparison can err in: `actorSkeleton` for refusals
 * (four-eyes: look-alikes meet, erring towards "the same person"), `actorKey` for grants
 * (assignment: only the same text meets, so no look-alike gets through).
 */
import { asLetters, confusablesAsWritten, foldCase, skeleton } from "../lib/skeleton.js"

/** The prefix of the actors the agent tool server names (`agent:<uuid>`). */
export const AGENT_PREFIX = "agent:"

/** The prefix of a group in a step's `assignees` (`group:finance`). */
export const GROUP_PREFIX = "group:"

/**
 * The group name a reference names (`group:finance` -> `finance`), else undefined (an actor).
 * The prefix is read in any case and compatibility form (`GROUP:finance`, `Group:finance`), as
 * names are compared (`actorKey`), and as an actor is refused when it reads as one
 * (src/services/actorValue.ts): a step's `GROUP:ctl` already granted the group `ctl`.
 */
export const groupNameOf = (ref: string): string | undefined => {
  // By characters, not UTF-16 units: a mathematical `𝐠` is two (`𝐠roup:x` had been cut mid-letter).
  let read = ""
  let units = 0
  for (const c of ref) {
    read += c
    units += c.length
    const folded = foldCase(read)
    if (folded === GROUP_PREFIX) return ref.slice(units)
    if (!GROUP_PREFIX.startsWith(folded)) return undefined
  }
  return undefined
}


/**
 * The key a person is granted by (an assignee, a claim holder): NFKC and case folding only (steps
 * 1 and 2 of `actorSkeleton`). Actors with invisible or format characters never get this far:
 * the edge's values are refused (src/services/actorValue.ts).
 */
export const actorKey = (name: string): string => foldCase(name)

/**
 * The key two people are told apart by for four-eyes: UTS #39's skeleton after case and
 * compatibility folding, exactly as src/lib/skeleton.ts spells it out, with `i` and `l` alike.
 * The table reads a capital `I` (and Greek `Ι`, Cyrillic `І`, the numeral `Ⅰ`) as `l`, but case
 * folding comes first and makes each an `i`: `biII@…` had read apart from `bill@…`, and decided
 * a four-eyes step after it. And before that, the table on the name as written (Greek and
 * Cyrillic capitals: `ΚIM` had read apart from `KIM`, since case folding made `κ`, which the table
 * reads as `ĸ`); after it small capitals as letters (Cyrillic `т` becomes `ᴛ`), `ß` as `ss` (`ẞ`
 * folds to `ß`), `vv` as `w`, `cl` as `d`. Visible marks stay: `fìn` is not `fin`.
 */
export const actorSkeleton = (name: string): string =>
  asLetters(skeleton(asLetters(confusablesAsWritten(name))))
    .replace(/ß/g, "ss").replace(/ĸ/g, "k").replace(/i/g, "l").replace(/vv/g, "w").replace(/cl/g, "d")

/** Whether `actor` names an agent of the tool server (`agent:<uuid>`), in any case or form. */
export const isAgentActor = (actor: string): boolean => foldCase(actor).startsWith(AGENT_PREFIX)

/** The agent's registry id an `agent:<uuid>` actor names, lower case; undefined for a person. */
export const agentIdOf = (actor: string): string | undefined =>
  isAgentActor(actor) ? foldCase(actor).slice(AGENT_PREFIX.length) : undefined

/** Whether two actors are one person for four-eyes. An agent is never a named person, nor another agent. */
export const samePerson = (a: string, b: string): boolean => {
  const agentA = agentIdOf(a)
  const agentB = agentIdOf(b)
  if (agentA !== undefined || agentB !== undefined) return agentA !== undefined && agentA === agentB
  return actorSkeleton(a) === actorSkeleton(b)
}
