/**
 * Hash routing: every screen has a link-able address and the gateway serves one page.
 *   #/                         the inbox: what waits, across entities
 *   #/entities                 entities
 *   #/entities/<id>            the entity's task board
 *   #/entities/<id>/start      the start-task form
 *   #/tasks/<taskId>           a task (composite ids percent-encoded)
 *   #/gl                       the GL connection
 */
import { useEffect, useState } from "preact/hooks"

export type Route =
  | { readonly screen: "inbox" }
  | { readonly screen: "entities" }
  | { readonly screen: "board"; readonly entityId: string }
  | { readonly screen: "start"; readonly entityId: string }
  | { readonly screen: "task"; readonly taskId: string }
  | { readonly screen: "gl" }
  | { readonly screen: "missing"; readonly path: string }

export const parseRoute = (hash: string): Route => {
  const path = hash.replace(/^#/, "") || "/"
  const parts = path.split("/").filter((p) => p !== "").map((p) => {
    try {
      return decodeURIComponent(p)
    } catch {
      return p
    }
  })
  if (parts.length === 0) return { screen: "inbox" }
  if (parts[0] === "entities" && parts.length === 1) return { screen: "entities" }
  if (parts[0] === "entities" && parts.length === 2) return { screen: "board", entityId: parts[1]! }
  if (parts[0] === "entities" && parts.length === 3 && parts[2] === "start") return { screen: "start", entityId: parts[1]! }
  if (parts[0] === "tasks" && parts.length === 2) return { screen: "task", taskId: parts[1]! }
  if (parts[0] === "gl" && parts.length === 1) return { screen: "gl" }
  return { screen: "missing", path }
}

export const href = {
  inbox: () => "#/",
  entities: () => "#/entities",
  board: (entityId: string) => `#/entities/${encodeURIComponent(entityId)}`,
  start: (entityId: string) => `#/entities/${encodeURIComponent(entityId)}/start`,
  task: (taskId: string) => `#/tasks/${encodeURIComponent(taskId)}`,
  gl: () => "#/gl"
}

export const navigate = (to: string) => {
  location.hash = to
}

export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => parseRoute(location.hash))
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash))
    addEventListener("hashchange", onChange)
    return () => removeEventListener("hashchange", onChange)
  }, [])
  return route
}
