/**
 * The live timeline: `reasoning.delta` events of one groupKey stream into one panel (their
 * text joined in seq order), every other event is a line of the feed, newest last.
 */
import type { TaskEvent } from "../api/resources.js"
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

export const Timeline = ({ taskId }: { taskId: string }) => {
  const { events, transport, error } = useTaskEvents(taskId)
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
        {feed.map((e) => (
          <li key={e.seq} data-seq={e.seq}>
            <span class="type">{e.type}</span> <span class="hint">#{e.seq} · {e.sourceLabel ?? e.source}</span>
            {summary(e) !== "" && <div>{summary(e)}</div>}
          </li>
        ))}
      </ol>
    </section>
  )
}
