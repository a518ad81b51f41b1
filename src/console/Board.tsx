/**
 * An entity's task board: each task's status in words, its priority where it says something
 * (words.ts priorityMarks: the usual level said once above the list, a task marked only where it
 * differs), what an open task waits
 * for, when it started (the reader's locale); open tasks first, newest first. Reloaded every
 * few seconds. On a phone, three columns (the start time under the title), in a region that
 * scrolls sideways on its own should they still not fit.
 */
import { gw } from "./api.js"
import { usePoll } from "./poll.js"
import { href } from "./router.js"
import { Badge, ErrorText, ScreenHeading, ScrollRegion, Time } from "./ui.js"
import { awaitingWord, humanize, priorityMarks } from "./words.js"

export const BOARD_REFRESH_MS = 3000

const OPEN_FIRST: Readonly<Record<string, number>> = { IN_PROGRESS: 0, FAILED: 1, COMPLETED: 2 }

export const Board = ({ entityId }: { entityId: string }) => {
  const entities = usePoll(() => gw.entities.listEntities(), 0, [])
  const tasks = usePoll(() => gw.entities.listTasks({ path: { entityId } }), BOARD_REFRESH_MS, [entityId])
  const entity = entities.data?.find((e) => e.id === entityId)
  const sorted = [...(tasks.data ?? [])].sort((a, b) =>
    (OPEN_FIRST[a.status] ?? 1) - (OPEN_FIRST[b.status] ?? 1) || b.createdAt.localeCompare(a.createdAt))
  const marks = priorityMarks(sorted.map((t) => t.priority))
  const mixed = sorted.some((t) => marks.marked(t.priority))
  return (
    <>
      <ScreenHeading>{entity?.name ?? "Entity"}: tasks</ScreenHeading>
      <p class="actions">
        <a class="button" href={href.start(entityId)}>New task</a>
        <a class="button secondary" href={href.entities()}>All entities</a>
      </p>
      <ErrorText message={tasks.error} />
      {tasks.data === undefined && tasks.error === undefined && <p>Loading…</p>}
      {tasks.data !== undefined && tasks.data.length === 0 && <p>No tasks yet.</p>}
      {tasks.data !== undefined && tasks.data.length > 0 && marks.common !== undefined && (
        <p class="hint" data-testid="usual-priority">
          {mixed
            ? `Tasks are ${humanize(marks.common).toLowerCase()} priority unless marked.`
            : `${sorted.length === 1 ? "The task is" : `All ${sorted.length} tasks are`} ${humanize(marks.common).toLowerCase()} priority.`}
        </p>
      )}
      {tasks.data !== undefined && tasks.data.length > 0 && (
        <ScrollRegion label="Tasks, scrollable">
          <table aria-label="Tasks" class="board">
            <thead>
              <tr>
                <th scope="col">Task</th><th scope="col">Status</th>
                <th scope="col">Waiting for</th><th scope="col" class="wide-only">Started</th>
              </tr>
            </thead>
            <tbody>
              {sorted.map((t) => (
                <tr key={t.id}>
                  <td>
                    <a href={href.task(t.id)}>{t.title}</a>
                    {/* On a phone the start time goes under the title, in place of its own column. */}
                    <div class="hint narrow-only">Started <Time iso={t.createdAt} /></div>
                  </td>
                  <td>
                    <Badge value={t.status} />
                    {marks.marked(t.priority) && <span class={`priority ${t.priority}`}> {humanize(t.priority)} priority</span>}
                  </td>
                  <td>{t.awaiting !== undefined ? awaitingWord(t.awaiting) : <span class="hint">Nothing</span>}</td>
                  <td class="wide-only"><Time iso={t.createdAt} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
    </>
  )
}
