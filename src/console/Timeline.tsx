/**
 * The live timeline: `reasoning.delta` events of one groupKey stream into one panel (their
 * text joined in seq order), every other event is a line of the feed, newest last. The
 * gateway's own record (audit and workspace events) reads as a sentence: who did what, when
 * (src/client/eventText.ts); any other event is shown by its type and payload.
 */
import { useMemo } from "preact/hooks"
import type { TaskEvent } from "../api/resources.js"
import { describeEvent, type EventText, type Known, makeTimelineIndex, type Part, whoText } from "../client/eventText.js"
import { useTaskEvents } from "./events.js"

const textOf = (e: TaskEvent) => {
  const t = e.payload.text ?? e.payload.delta
  return typeof t === "string" ? t : JSON.stringify(e.payload)
}

const summary = (e: TaskEvent) => {
  const entries = Object.entries(e.payload)
  if (entries.length === 0) return ""
  return entries.map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join(", ")
}

/** A stored value in the reader's number format; text as it is (in quotes inside a change). */
const valueText = (v: unknown, quoted: boolean) =>
  v === null || v === undefined || v === ""
    ? "empty"
    : typeof v === "number"
    ? v.toLocaleString()
    : typeof v === "string"
    ? quoted ? `“${v}”` : v
    : JSON.stringify(v)

const PartView = ({ part }: { part: Part }) => {
  if (typeof part === "string") return <>{part}</>
  switch (part.kind) {
    case "name":
      return <span class="name">{part.text}</span>
    case "id":
      return <span class="mono" title={part.full}>{part.text}</span>
    case "quote":
      return <q>{part.text}</q>
    case "value":
      return <span class="value">{valueText(part.value, false)}</span>
    case "change":
      return (
        <>
          from <span class="value">{valueText(part.from, true)}</span> to <span class="value">{valueText(part.to, true)}</span>
        </>
      )
  }
}

const localTime = (iso: string) => {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString()
}

const RecordLine = ({ e, text }: { e: TaskEvent; text: EventText }) => (
  <li data-seq={e.seq} data-type={e.type}>
    <div>
      {text.who !== undefined && <><strong class="who">{whoText(text.who)}</strong>{" "}</>}
      {text.what.map((p, i) => <PartView key={i} part={p} />)}
    </div>
    <div class="hint">
      <time dateTime={e.createdAt}>{localTime(e.createdAt)}</time> · #{e.seq} · {e.type}
    </div>
  </li>
)

export const Timeline = ({ taskId, known = {} }: { taskId: string; known?: Known }) => {
  const { events, transport, error } = useTaskEvents(taskId)
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
      const g = groups.get(e.groupKey) ?? []
      g.push(e)
      groups.set(e.groupKey, g)
    } else feed.push(e)
  }
  return (
    <section aria-labelledby="timeline-heading">
      <h2 id="timeline-heading">Timeline</h2>
      <p class="hint" data-transport={transport}>
        {transport === "live" ? "Live" : transport === "polling" ? "Updating every second" : "Connecting…"}
      </p>
      {error !== undefined && <p class="error">{error}</p>}
      {[...groups.entries()].map(([key, list]) => (
        <section class="panel" key={key} aria-label={`Reasoning ${key}`} data-group={key}>
          <h3>{list[0]!.sourceLabel ?? "Reasoning"} <span class="hint">({key})</span></h3>
          <p class="reasoning">{list.map(textOf).join("")}</p>
        </section>
      ))}
      {feed.length === 0 && groups.size === 0 && <p>No events yet.</p>}
      <ol class="feed" aria-label="Events">
        {feed.map((e) => {
          const text = describeEvent(e, known, index)
          if (text !== undefined) return <RecordLine key={e.seq} e={e} text={text} />
          return (
            <li key={e.seq} data-seq={e.seq}>
              {/* The source as stored, the label only beside it: a label cannot pass for "audit". */}
              <span class="type">{e.type}</span>{" "}
              <span class="hint">#{e.seq} · {e.source}{e.sourceLabel !== undefined && e.sourceLabel !== e.source ? ` (${e.sourceLabel})` : ""}</span>
              {summary(e) !== "" && <div>{summary(e)}</div>}
            </li>
          )
        })}
      </ol>
    </section>
  )
}
