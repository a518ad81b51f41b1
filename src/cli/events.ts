/**
 * Rendering the task timeline. `events follow` prints each new event once, in seq order; the
 * `reasoning.delta` events of one groupKey stream into one growing line (their payload text
 * appended as it arrives), closed by the next event of any other kind or group.
 */
import type { TaskEvent } from "../api/resources.js"
import { truncate } from "./common.js"

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
export const eventLine = (event: TaskEvent): string =>
  `#${event.seq} ${time(event.createdAt)} ${event.type} [${who(event)}] ${truncate(JSON.stringify(event.payload), 120)}`

/** Stateful writer: feed it batches of events; it returns the text to write. */
export const makeTimelineRenderer = () => {
  let openGroup: string | undefined
  const seen = new Set<number>()
  return {
    /** The events not printed before, in seq order, rendered. */
    push: (events: ReadonlyArray<TaskEvent>): string => {
      const fresh = events.filter((e) => !seen.has(e.seq)).sort((a, b) => a.seq - b.seq)
      let out = ""
      for (const e of fresh) {
        seen.add(e.seq)
        const group = isDelta(e) ? (e.groupKey ?? `seq-${e.seq}`) : undefined
        if (group !== undefined && group === openGroup) {
          out += deltaText(e)
          continue
        }
        if (openGroup !== undefined) out += "\n"
        openGroup = undefined
        if (group !== undefined) {
          out += `#${e.seq} ${time(e.createdAt)} ${who(e)} (${group}) ▸ ${deltaText(e)}`
          openGroup = group
        } else {
          out += `${eventLine(e)}\n`
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
    fresh: (events: ReadonlyArray<TaskEvent>) => events.filter((e) => !seen.has(e.seq)).sort((a, b) => a.seq - b.seq),
    markSeen: (events: ReadonlyArray<TaskEvent>) => events.forEach((e) => seen.add(e.seq))
  }
}
