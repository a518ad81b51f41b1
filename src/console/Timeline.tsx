/**
 * The live timeline, by day, newest last: `reasoning.delta` events of one groupKey stream into
 * one panel (their text joined in seq order); the gateway's own record (audit and workspace
 * events) reads as sentences in the screen's words, who did what with old → new values
 * (./timelineWords.ts), related edits grouped; any other event shows its kind, its sender and
 * its payload in words. Times in the reader's locale.
 */
import { useMemo } from "preact/hooks"
import type { TaskEvent } from "../api/resources.js"
import { makeTimelineIndex } from "../client/eventText.js"
import type { useTaskEvents } from "./events.js"
import { type ConsoleKnown, entriesOf, type Entry, NOTHING_KNOWN, type Piece } from "./timelineWords.js"
import { Time } from "./ui.js"
import { formatDay, humanize } from "./words.js"

const textOf = (e: TaskEvent) => {
  const t = e.payload.text ?? e.payload.delta
  return typeof t === "string" ? t : JSON.stringify(e.payload)
}

const summary = (e: TaskEvent) =>
  Object.entries(e.payload)
    .map(([k, v]) => `${humanize(k)}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ")

export const PieceView = ({ piece }: { piece: Piece }) => {
  if (typeof piece === "string") return <>{piece}</>
  switch (piece.kind) {
    case "name":
      return <span class="name">{piece.text}</span>
    case "quote":
      return <q>{piece.text}</q>
    case "id":
      return <span class="mono" title={piece.full}>{piece.text}</span>
    case "change":
      return piece.from === undefined
        ? <>now <span class="value">{piece.to}</span></>
        : (
          <>
            <span class="value old">{piece.from}</span> →{" "}
            <span class="value">{piece.to}</span>
          </>
        )
  }
}

const EntryLine = ({ entry }: { entry: Entry }) => {
  const last = entry.events[entry.events.length - 1]!
  return (
    <li data-seq={entry.events[0]!.seq} data-seqs={entry.events.map((e) => e.seq).join(" ")} data-type={last.type}>
      <div>
        {entry.who !== undefined && <><strong class="who">{entry.who}</strong>{" "}</>}
        {entry.what.map((p, i) => <PieceView key={i} piece={p} />)}
      </div>
      <div class="hint"><Time iso={last.createdAt} /></div>
    </li>
  )
}

const OtherLine = ({ e }: { e: TaskEvent }) => (
  <li data-seq={e.seq} data-type={e.type}>
    {/* The source as stored, the label only beside it: a label cannot pass for "audit". */}
    <div><span class="type">{humanize(e.type.replace(/\./g, " "))}</span> <span class="hint">from {e.sourceLabel ?? e.source}{e.sourceLabel !== undefined && e.sourceLabel !== e.source ? ` (${e.source})` : ""}</span></div>
    {summary(e) !== "" && <div>{summary(e)}</div>}
    <div class="hint"><Time iso={e.createdAt} /></div>
  </li>
)

/** The task's events come from the screen (./events.ts useTaskEvents), which reads them for other parts too. */
export const Timeline = ({ feed: { events, transport, error }, known = NOTHING_KNOWN }: {
  feed: ReturnType<typeof useTaskEvents>
  known?: ConsoleKnown
}) => {
  // Agents' names and files' names, as the timeline itself tells them.
  const index = useMemo(() => {
    const ix = makeTimelineIndex()
    for (const e of events) ix.add(e)
    return ix
  }, [events])
  const groups = new Map<string, Array<TaskEvent>>()
  const feed: Array<TaskEvent> = []
  for (const e of events) {
    if (e.type === "reasoning.delta" && e.groupKey !== undefined) {
      // One panel per writer and group: a producer's deltas under an agent's groupKey get a panel
      // of their own, never text inside the agent's.
      const key = JSON.stringify([e.origin, e.source, e.groupKey])
      const g = groups.get(key) ?? []
      g.push(e)
      groups.set(key, g)
    } else feed.push(e)
  }
  const entries = entriesOf(feed, known, index)
  // By day of the entry's first event, in the reader's calendar.
  const days: Array<{ day: string; entries: Array<(typeof entries)[number]> }> = []
  for (const entry of entries) {
    const day = formatDay(entry.events[0]!.createdAt)
    if (days.at(-1)?.day !== day) days.push({ day, entries: [] })
    days.at(-1)!.entries.push(entry)
  }
  return (
    <section aria-labelledby="timeline-heading" class="timeline">
      <h2 id="timeline-heading">Timeline</h2>
      <p class="hint" data-transport={transport}>
        {transport === "live" ? "Live" : transport === "polling" ? "Updating every second" : "Connecting…"}
      </p>
      {error !== undefined && <p class="error">{error}</p>}
      {[...groups.entries()].map(([key, list]) => (
        <section class="panel" key={key} aria-label={`Reasoning of ${list[0]!.sourceLabel ?? "an agent"}`} data-group={list[0]!.groupKey}>
          {/* A producer's source as stored beside its label, as in the feed: its label cannot pass for an agent's name. */}
          <h3>{list[0]!.sourceLabel ?? "Reasoning"}{list[0]!.origin === "producer" && list[0]!.sourceLabel !== undefined && list[0]!.sourceLabel !== list[0]!.source ? ` (${list[0]!.source})` : ""} <span class="hint">· <Time iso={list.at(-1)!.createdAt} /></span></h3>
          <p class="reasoning">{list.map(textOf).join("")}</p>
        </section>
      ))}
      {feed.length === 0 && groups.size === 0 && <p>No events yet.</p>}
      {days.map(({ day, entries }) => (
        <div key={day} class="day">
          <h3 class="day-heading">{day}</h3>
          <ol class="feed" aria-label={`Events of ${day}`}>
            {entries.map((entry) =>
              entry.what === undefined
                ? <OtherLine key={entry.events[0].position} e={entry.events[0]} />
                : <EntryLine key={entry.events[0]!.position} entry={entry} />
            )}
          </ol>
        </div>
      ))}
    </section>
  )
}
