/**
 * Rendering the task timeline. `events follow` prints each new event once, in timeline order; the
 * `reasoning.delta` events of one groupKey stream into one growing line (their payload text
 * appended as it arrives), closed by the next event of any other kind or group. The gateway's
 * own record (audit and workspace events) reads as a sentence, who in brackets
 * (src/client/eventText.ts); other events show their payload's JSON.
 */
import type { TaskEvent } from "../api/resources.js"
import { comparePositions } from "../api/eventPaging.js"
import { describeEvent, type Part, type TimelineIndex, makeTimelineIndex, whoText } from "../client/eventText.js"
import { truncate } from "./common.js"

/**
 * Text from the timeline made safe for a terminal: control characters (an escape sequence, a
 * line break in a comment), line and paragraph separators and bidirectional overrides are
 * printed as \u escapes, so a line stays one line and shows what was written.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
/** The same but line breaks and tabs, for reasoning text, which may run over lines. */
// eslint-disable-next-line no-control-regex
const UNSAFE_IN_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const escape = (c: string) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
export const terminalSafe = (s: string) => s.replace(UNSAFE, escape)
const terminalSafeText = (s: string) => s.replace(UNSAFE_IN_TEXT, escape)

/** At most this many characters of someone's comments or a stored value in one line. */
const MAX_TEXT = 120

/**
 * A stored value: a string bare when it is one plain word that cannot be read as another type
 * (NEEDS_ATTENTION, Delta), else quoted as JSON ("Delta Air Lines", "1240"); other values as JSON.
 */
const valueText = (v: unknown) => {
  if (typeof v === "string" && /^[\p{L}\p{N}_.:@/-]+$/u.test(v) && !/^(-?[\d.]+(e[+-]?\d+)?|null|true|false)$/i.test(v)) {
    return truncate(v, MAX_TEXT)
  }
  return truncate(JSON.stringify(v) ?? "null", MAX_TEXT)
}

const partsText = (parts: ReadonlyArray<Part>) =>
  parts.reduce<string>((out, p) => {
    if (typeof p === "string") return out + p
    switch (p.kind) {
      case "name":
        return out + p.text
      case "id":
        return out + p.text
      case "quote":
        return out + truncate(JSON.stringify(p.text), MAX_TEXT)
      case "value":
        return out + valueText(p.value)
      case "change":
        return `${out.trimEnd()}: ${valueText(p.from)} → ${valueText(p.to)}`
    }
  }, "")

/**
 * The sentence for one of the gateway's own events: who (absent when the workspace acted by
 * itself) and what; undefined for any other event.
 */
export const recordText = (event: TaskEvent, index?: TimelineIndex): { readonly who?: string; readonly what: string } | undefined => {
  const text = describeEvent(event, {}, index)
  if (text === undefined) return undefined
  const what = terminalSafe(partsText(text.what))
  return text.who !== undefined ? { who: terminalSafe(whoText(text.who)), what } : { what }
}

/** The PAYLOAD column of `events list`: the sentence for the gateway's own events, else the payload's JSON. */
export const payloadCell = (event: TaskEvent, index?: TimelineIndex): string => {
  const text = recordText(event, index)
  if (text === undefined) return terminalSafe(truncate(JSON.stringify(event.payload), 80))
  return text.who !== undefined ? `${text.who} ${text.what}` : text.what
}

/** An index of the events in `events` (agents' and files' names), for rendering them. */
export const indexOf = (events: ReadonlyArray<TaskEvent>) => {
  const index = makeTimelineIndex()
  for (const e of events) index.add(e)
  return index
}

const deltaText = (event: TaskEvent): string => {
  const p = event.payload
  for (const key of ["text", "delta", "content"]) {
    if (typeof p[key] === "string") return p[key] as string
  }
  return JSON.stringify(p)
}

const isDelta = (event: TaskEvent) => event.type === "reasoning.delta"

const time = (iso: string) => (/T(\d\d:\d\d:\d\d)/.exec(iso)?.[1] ?? iso)

const who = (event: TaskEvent) => event.sourceLabel ?? event.source

/** One line for an event that is not a streamed delta. */
export const eventLine = (event: TaskEvent, index?: TimelineIndex): string => {
  const text = recordText(event, index)
  return text !== undefined
    ? `#${event.seq} ${time(event.createdAt)} ${event.type} [${text.who ?? event.source}] ${text.what}`
    : terminalSafe(`#${event.seq} ${time(event.createdAt)} ${event.type} [${who(event)}] ${truncate(JSON.stringify(event.payload), 120)}`)
}

const inOrder = (events: ReadonlyArray<TaskEvent>) => [...events].sort((a, b) => comparePositions(a.position, b.position))

/** Stateful writer: feed it batches of events; it returns the text to write. */
export const makeTimelineRenderer = () => {
  let openGroup: string | undefined
  const seen = new Set<string>()
  // What earlier events said (an agent's name, a file's name), for the lines of later ones.
  const index = makeTimelineIndex()
  return {
    /** The events not printed before, in timeline order, rendered. */
    push: (events: ReadonlyArray<TaskEvent>): string => {
      const fresh = inOrder(events.filter((e) => !seen.has(e.position)))
      let out = ""
      for (const e of fresh) {
        seen.add(e.position)
        index.add(e)
        const group = isDelta(e) ? (e.groupKey ?? `position-${e.position}`) : undefined
        // One line per writer and group: another source's delta with the same groupKey (a
        // producer's under an agent's group) starts a line of its own, never continues the agent's.
        const line = group === undefined ? undefined : JSON.stringify([e.origin, e.source, group])
        if (line !== undefined && line === openGroup) {
          out += terminalSafeText(deltaText(e))
          continue
        }
        if (openGroup !== undefined) out += "\n"
        openGroup = undefined
        if (group !== undefined) {
          out += `${terminalSafe(`#${e.seq} ${time(e.createdAt)} ${who(e)} (${group}) ▸ `)}${terminalSafeText(deltaText(e))}`
          openGroup = line
        } else {
          out += `${eventLine(e, index)}\n`
        }
      }
      return out
    },
    /** Ends a growing line, if one is open. */
    close: (): string => {
      const out = openGroup !== undefined ? "\n" : ""
      openGroup = undefined
      return out
    },
    fresh: (events: ReadonlyArray<TaskEvent>) => inOrder(events.filter((e) => !seen.has(e.position))),
    markSeen: (events: ReadonlyArray<TaskEvent>) => events.forEach((e) => seen.add(e.position))
  }
}
