import { gw } from "./api.js"
import { usePoll } from "./poll.js"
import { href } from "./router.js"
import { ErrorText, ScreenHeading } from "./ui.js"

export const Entities = () => {
  const entities = usePoll(() => gw.entities.listEntities(), 0, [])
  return (
    <>
      <ScreenHeading>Entities</ScreenHeading>
      <ErrorText message={entities.error} />
      {entities.data === undefined && entities.error === undefined && <p>Loading…</p>}
      {entities.data !== undefined && entities.data.length === 0 && <p>This tenant has no entities.</p>}
      {entities.data !== undefined && entities.data.length > 0 && (
        <table>
          <caption class="hint">Pick an entity to see its tasks.</caption>
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Slug</th></tr>
          </thead>
          <tbody>
            {entities.data.map((e) => (
              <tr key={e.id}>
                <td><a href={href.board(e.id)}>{e.name}</a></td>
                <td class="mono">{e.slug}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}
