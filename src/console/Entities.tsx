import { gw } from "./api.js"
import { usePoll } from "./poll.js"
import { href } from "./router.js"
import { ErrorText, ScreenHeading } from "./ui.js"

/** The tenant's entities: pick one to see its tasks. (Slugs are the API's names: shown small.) */
export const Entities = () => {
  const entities = usePoll(() => gw.entities.listEntities(), 0, [])
  return (
    <>
      <ScreenHeading>Entities</ScreenHeading>
      <ErrorText message={entities.error} />
      {entities.data === undefined && entities.error === undefined && <p>Loading…</p>}
      {entities.data !== undefined && entities.data.length === 0 && <p>This tenant has no entities.</p>}
      {entities.data !== undefined && entities.data.length > 0 && (
        <>
          <p class="hint">Pick an entity to see its tasks.</p>
          <ul class="cards" aria-label="Entities">
            {entities.data.map((e) => (
              <li key={e.id}>
                <a class="card" href={href.board(e.id)}>
                  <span class="card-title">{e.name}</span>
                  <span class="hint mono">{e.slug}</span>
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  )
}
