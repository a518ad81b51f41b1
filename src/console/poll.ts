/**
 * Loads and keeps reloading: `load` runs at once, then `everyMs` after the previous load
 * settled (never overlapping, never faster), paused while the page is hidden. `reload()` runs
 * it now. One request per period per screen, whatever the number of changes.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { messageOf } from "./api.js"

export interface Polled<A> {
  readonly data: A | undefined
  readonly error: string | undefined
  readonly status: number | undefined
  readonly reload: () => void
}

export const usePoll = <A>(load: () => Promise<A>, everyMs: number, deps: ReadonlyArray<unknown>): Polled<A> => {
  const [state, setState] = useState<{ data: A | undefined; error: string | undefined; status: number | undefined }>({
    data: undefined,
    error: undefined,
    status: undefined
  })
  const kick = useRef<() => void>(() => {})
  useEffect(() => {
    setState({ data: undefined, error: undefined, status: undefined })
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    let running = false
    const run = async () => {
      if (stopped || running) return
      if (timer !== undefined) clearTimeout(timer)
      running = true
      try {
        const data = await load()
        if (!stopped) setState({ data, error: undefined, status: undefined })
      } catch (e) {
        const status = (e as { statusCode?: number })?.statusCode
        if (!stopped) setState((s) => ({ data: s.data, error: messageOf(e), status }))
      } finally {
        running = false
        if (!stopped && everyMs > 0) timer = setTimeout(tick, everyMs)
      }
    }
    const tick = () => (document.hidden ? (timer = setTimeout(tick, everyMs)) : void run())
    kick.current = () => void run()
    void run()
    return () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps)
  const reload = useCallback(() => kick.current(), [])
  return { ...state, reload }
}
