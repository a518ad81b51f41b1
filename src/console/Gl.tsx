/**
 * The GL connection: status in words with the provider's product name; Connect opens the
 * session's `sessionUrl` in a popup (the provider flow runs there) and polls /v1/gl/status until
 * connected; Disconnect asks first, then removes it.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { gw, messageOf } from "./api.js"
import { usePoll } from "./poll.js"
import { ErrorText, ScreenHeading, Time, useConfirm } from "./ui.js"
import { providerName, statusWord, withProviderNames } from "./words.js"

export const GL_POLL_MS = 1000
const GL_POLL_LIMIT_MS = 10 * 60 * 1000

export const Gl = () => {
  const status = usePoll(() => gw.gl.glStatus(), 0, [])
  const [waiting, setWaiting] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const [fallbackUrl, setFallbackUrl] = useState<string | undefined>()
  const stop = useRef<() => void>(() => {})
  useEffect(() => () => stop.current(), [])

  const connect = async () => {
    setError(undefined)
    setFallbackUrl(undefined)
    // Opened in the click itself (a popup opened after an await is blocked), then pointed at the session.
    const popup = window.open("", "gl-connect", "popup,width=520,height=640")
    try {
      const session = await gw.gl.glConnectSession({ payload: {} })
      // The link comes from the workspace service: follow a web address only, never javascript: or data:.
      if (!isWebAddress(session.sessionUrl)) {
        popup?.close()
        setError("The connect link the gateway returned is not a web address; the connection was not started.")
        return
      }
      if (popup !== null) popup.location.href = session.sessionUrl
      else setFallbackUrl(session.sessionUrl)
      setWaiting(true)
      const started = Date.now()
      let timer: ReturnType<typeof setTimeout> | undefined
      stop.current = () => timer !== undefined && clearTimeout(timer)
      const poll = async () => {
        try {
          const s = await gw.gl.glStatus()
          if (s.connected) {
            setWaiting(false)
            status.reload()
            return
          }
        } catch {
          // keep polling: a transient failure is not the end of the flow
        }
        if (Date.now() - started > GL_POLL_LIMIT_MS) {
          setWaiting(false)
          setError("Still not connected; try again.")
          return
        }
        timer = setTimeout(poll, GL_POLL_MS)
      }
      timer = setTimeout(poll, GL_POLL_MS)
    } catch (e) {
      popup?.close()
      setError(messageOf(e))
    }
  }

  const { dialog, ask } = useConfirm()
  const disconnect = async () => {
    const name = status.data?.service !== undefined ? providerName(status.data.service) : "the general ledger"
    const ok = await ask({
      title: `Disconnect ${name}?`,
      body: (
        <p>
          Tasks stop syncing with {name} until someone connects it again, which means signing in to {name} once more.
        </p>
      ),
      confirm: "Disconnect",
      danger: true
    })
    if (!ok) return
    setError(undefined)
    try {
      await gw.gl.glDisconnect()
      status.reload()
    } catch (e) {
      setError(messageOf(e))
    }
  }

  const s = status.data
  return (
    <>
      <ScreenHeading>General ledger</ScreenHeading>
      <ErrorText message={status.error} />
      {s === undefined && status.error === undefined && <p>Loading…</p>}
      {s !== undefined && (
        <section class="panel" aria-label="GL status">
          <p data-testid="gl-status" class="gl-status">
            <strong>{s.connected ? "Connected" : "Not connected"}</strong>
            {s.service !== undefined && (s.connected ? ` to ${providerName(s.service)}` : ` (last: ${providerName(s.service)})`)}
            {s.status !== undefined && !s.connected && s.status !== "" && ` · ${statusWord(s.status)}`}
          </p>
          {s.workspaceName !== undefined && s.workspaceName !== null && (
            <p>Company: {withProviderNames(String(s.workspaceName))}</p>
          )}
          {s.provider !== undefined && s.provider !== null && s.provider !== s.service && (
            <p class="hint">Through {providerName(String(s.provider))}</p>
          )}
          {s.lastSyncAt !== undefined && s.lastSyncAt !== null && <p class="hint">Last sync <Time iso={s.lastSyncAt} /></p>}
          <div class="actions">
            {!s.connected && <button type="button" onClick={connect} disabled={waiting}>Connect</button>}
            {s.connected && <button type="button" class="danger" onClick={disconnect}>Disconnect</button>}
          </div>
          {waiting && <p role="status">Waiting for the connection to complete in the popup…</p>}
          {fallbackUrl !== undefined && <p>The popup was blocked: <a href={fallbackUrl} target="_blank" rel="noopener">open the connect page</a>.</p>}
        </section>
      )}
      <ErrorText message={error} />
      {dialog}
    </>
  )
}

const isWebAddress = (link: string): boolean => {
  try {
    const { protocol } = new URL(link, location.href)
    return protocol === "https:" || protocol === "http:"
  } catch {
    return false
  }
}
