/**
 * The task console: a Preact single-page app served by the gateway at / (scripts/build-console.mjs
 * bundles it; src/http/console.ts serves it). It talks to this gateway's /v1 only, through the
 * typed client derived from GatewayApi (./api.ts).
 */
import { render } from "preact"
import { Board } from "./Board.js"
import { Entities } from "./Entities.js"
import { Gl } from "./Gl.js"
import { Inbox } from "./Inbox.js"
import { href, type Route, useRoute } from "./router.js"
import { StartTask } from "./StartTask.js"
import "./styles.css"
import { Task } from "./Task.js"
import { ScreenHeading } from "./ui.js"

const Screen = ({ route }: { route: Route }) => {
  switch (route.screen) {
    case "inbox":
      return <Inbox />
    case "entities":
      return <Entities />
    case "board":
      return <Board key={route.entityId} entityId={route.entityId} />
    case "start":
      return <StartTask key={route.entityId} entityId={route.entityId} />
    case "task":
      return <Task key={route.taskId} taskId={route.taskId} />
    case "gl":
      return <Gl />
    case "missing":
      return (
        <>
          <ScreenHeading>Not found</ScreenHeading>
          <p>Nothing lives at {route.path}. <a href={href.inbox()}>Go to the inbox</a>.</p>
        </>
      )
  }
}

const App = () => {
  const route = useRoute()
  return (
    <>
      <a class="skip" href="#main" onClick={(e) => {
        e.preventDefault()
        document.getElementById("main")?.focus()
      }}>Skip to content</a>
      <header>
        <span class="brand">Task console</span>
        <nav aria-label="Main">
          <ul>
            <li><a href={href.inbox()} aria-current={route.screen === "inbox" ? "page" : undefined}>Inbox</a></li>
            <li><a href={href.entities()} aria-current={route.screen === "entities" ? "page" : undefined}>Entities</a></li>
            <li><a href="#/gl" aria-current={route.screen === "gl" ? "page" : undefined}>General ledger</a></li>
            <li><a href="docs">API reference</a></li>
          </ul>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <Screen key={route.screen} route={route} />
      </main>
    </>
  )
}

render(<App />, document.getElementById("app")!)
