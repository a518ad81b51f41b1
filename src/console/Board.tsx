/** An entity's task board: status, priority and what each open task awaits, reloaded every few seconds. */
import { gw } from "./api.js"
import { usePoll } from "./poll.js"
import { href } from "./router.js"
import { Badge, ErrorText, ScreenHeading } from "./ui.js"

export const BOARD_REFRESH_MS = 3000

export const Board = ({ entityId }: { entityId: string }) => {
  const entities = usePoll(() => gw.entities.listEntities(), 0, [])
  const tasks = usePoll(() => gw.entities.listTasks({ path: { entityId } }), BOARD_REFRESH_MS, [entityId])
  const entity = entities.data?.find((e) => e.id === entityId)
  return (
    <>
      <ScreenHeading>{entity?.name ?? "Entity"}: tasks</ScreenHeading>
      <p class="actions">
        <a class="button" href={href.start(entityId)}>New task</a>
        <a href={href.entities()}>All entities</a>
      </p>
      <ErrorText message={tasks.error} />
      {tasks.data === undefined && tasks.error === undefined && <p>Loading…</p>}
      {tasks.data !== undefined && tasks.data.length === 0 && <p>No tasks yet.</p>}
      {tasks.data !== undefined && tasks.data.length > 0 && (
        <table aria-label="Tasks">
          <thead>
            <tr>
              <th scope="col">Task</th><th scope="col">Status</th><th scope="col">Priority</th>
              <th scope="col">Awaiting</th><th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {[...tasks.data].sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((t) => (
              <tr key={t.id}>
                <td><a href={href.task(t.id)}>{t.title}</a></td>
                <td><Badge value={t.status} /></td>
                <td>{t.priority}</td>
                <td>{t.awaiting !== undefined ? <Badge value="awaiting" label={`awaiting ${t.awaiting}`} /> : "—"}</td>
                <td><time dateTime={t.createdAt}>{new Date(t.createdAt).toLocaleString()}</time></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}
