/**
 * A task's timeline, kept current. Live through the gateway's Server-Sent Events stream
 * (`GET /v1/tasks/:taskId/events/stream`, resumable: the browser resends the last `id:` as
 * Last-Event-ID when it reconnects). When the stream cannot be opened (a gateway without it
 * answers 404/405, or it does not open within a few seconds) the hook polls the event list
 * every 0.7 s instead, asking only for events after the last position it has. Events are kept
 * by position (the store's order), so a replay or an overlap never shows one twice.
 */
import { useEffect, useState } from "preact/hooks"
import type { TaskEvent } from "../api/resources.js"
import { comparePositions, laterPosition } from "../api/eventPaging.js"
import { encodePathSegment } from "../client/pathParams.js"
import { consoleBase, gw } from "./api.js"

export const POLL_MS = 700
const OPEN_TIMEOUT_MS = 4000

export type Transport = "connecting" | "live" | "polling"

export const streamUrl = (taskId: string) => `${consoleBase}/v1/tasks/${encodePathSegment(taskId)}/events/stream`

export const useTaskEvents = (taskId: string): { events: ReadonlyArray<TaskEvent>; transport: Transport; error?: string } => {
  const [events, setEvents] = useState<ReadonlyArray<TaskEvent>>([])
  const [transport, setTransport] = useState<Transport>("connecting")
  const [error, setError] = useState<string | undefined>()

  useEffect(() => {
    setEvents([])
    setTransport("connecting")
    const byPosition = new Map<string, TaskEvent>()
    let last: string | undefined
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let source: EventSource | undefined

    const merge = (incoming: ReadonlyArray<TaskEvent>) => {
      let changed = false
      for (const e of incoming) {
        if (typeof e?.position !== "string" || byPosition.has(e.position)) continue
        byPosition.set(e.position, e)
        last = laterPosition(last, e.position)
        changed = true
      }
      if (changed && !stopped) setEvents([...byPosition.values()].sort((a, b) => comparePositions(a.position, b.position)))
    }

    // Only events after the last position this page has (the whole timeline the first time).
    const list = () =>
      gw.events.listEvents({ path: { taskId }, urlParams: last !== undefined ? { after: last } : {} })

    const poll = async () => {
      if (stopped) return
      let wait = POLL_MS
      try {
        if (!document.hidden) {
          const page = await list()
          merge(page.events)
          setError(undefined)
          // The answer stopped at its byte budget: the rest comes next, without waiting.
          if (page.nextAfter !== undefined && page.events.length > 0) wait = 0
        }
      } catch (e) {
        wait = POLL_MS * 5
        setError(String((e as { message?: string })?.message ?? e))
      }
      if (!stopped) timer = setTimeout(poll, wait)
    }

    const fallBack = () => {
      source?.close()
      source = undefined
      if (stopped) return
      setTransport("polling")
      if (timer !== undefined) clearTimeout(timer)
      void poll()
    }

    // The stream sends what is there first, then what is new; polling starts with the whole list.
    // (No separate first read: on a long timeline it would fetch everything twice.)
    if (typeof EventSource === "undefined") fallBack()
    else {
      let opened = false
      source = new EventSource(streamUrl(taskId))
      const openTimer = setTimeout(() => !opened && fallBack(), OPEN_TIMEOUT_MS)
      source.onopen = () => {
        opened = true
        clearTimeout(openTimer)
        if (!stopped) setTransport("live")
      }
      source.onmessage = (m) => {
        try {
          merge([JSON.parse(m.data) as TaskEvent])
        } catch {
          // not an event: ignore
        }
      }
      source.onerror = () => {
        // Before opening (404/405, wrong type) or closed for good: poll. Otherwise the browser
        // reconnects by itself with Last-Event-ID.
        if (!opened || source?.readyState === EventSource.CLOSED) {
          clearTimeout(openTimer)
          fallBack()
        }
      }
    }
    return () => {
      stopped = true
      source?.close()
      if (timer !== undefined) clearTimeout(timer)
    }
  }, [taskId])

  return error === undefined ? { events, transport } : { events, transport, error }
}
