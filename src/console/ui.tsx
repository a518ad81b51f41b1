/**
 * Small shared pieces: the screen heading (focused on arrival, for keyboard and screen-reader
 * users), status badges in words, errors, copyable ids, the in-page confirmation dialog, and a
 * region that scrolls a wide table inside itself and says so.
 */
import type { ComponentChildren } from "preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { formatTime, statusWord } from "./words.js"

export const ScreenHeading = ({ children }: { children: ComponentChildren }) => {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    ref.current?.focus()
  }, [])
  return <h1 tabIndex={-1} ref={ref}>{children}</h1>
}

/** A status in words ("In progress"), coloured by the enum it stands for. */
export const Badge = ({ value, label }: { value: string; label?: string }) => (
  <span class={`badge ${value.replace(/[^A-Za-z0-9_-]/g, "")}`}>{label ?? statusWord(value)}</span>
)

export const ErrorText = ({ id, message }: { id?: string; message: string | undefined }) =>
  message === undefined ? null : <p class="error" id={id} role="alert">{message}</p>

export const Json = ({ value, label }: { value: unknown; label: string }) => (
  <figure class="json">
    <figcaption class="hint">{label}</figcaption>
    <pre tabIndex={0} aria-label={label}>{JSON.stringify(value, null, 2)}</pre>
  </figure>
)

/** A time in the reader's locale, machine-readable beside it. */
export const Time = ({ iso }: { iso: string }) => <time dateTime={iso}>{formatTime(iso)}</time>

/** An id for the few places a person needs one (support, the API): shown short, copied whole. */
export const CopyId = ({ id, label }: { id: string; label: string }) => {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(id)
      setCopied(true)
      setTimeout(() => setCopied(false), 2000)
    } catch {
      // No clipboard (an insecure origin): the id stays selectable on screen.
      setCopied(false)
    }
  }
  return (
    <span class="copy-id">
      <span class="hint">{label}</span> <code class="mono" title={id}>{id}</code>{" "}
      <button type="button" class="secondary small" onClick={copy} aria-label={`Copy ${label.toLowerCase()}`}>
        {copied ? "Copied" : "Copy"}
      </button>
    </span>
  )
}

export interface ConfirmOptions {
  readonly title: string
  readonly body: ComponentChildren
  readonly confirm: string
  /** A destructive action: its button is red and Cancel has the focus. */
  readonly danger?: boolean
}

/**
 * An in-page confirmation (a modal <dialog>, not window.confirm): `ask` opens it and resolves
 * true when the action is confirmed, false on Cancel or Escape. Render `dialog` once.
 */
export const useConfirm = (): { dialog: ComponentChildren; ask: (o: ConfirmOptions) => Promise<boolean> } => {
  const ref = useRef<HTMLDialogElement>(null)
  const [options, setOptions] = useState<ConfirmOptions | undefined>()
  const settle = useRef<(ok: boolean) => void>(() => {})
  const opener = useRef<Element | null>(null)
  const close = (ok: boolean) => {
    ref.current?.close()
    setOptions(undefined)
    settle.current(ok)
    settle.current = () => {}
    // Back where the person was.
    if (opener.current instanceof HTMLElement && opener.current.isConnected) opener.current.focus()
  }
  useEffect(() => {
    if (options !== undefined && ref.current !== null && !ref.current.open) {
      ref.current.showModal()
      const first = ref.current.querySelector<HTMLButtonElement>(options.danger === true ? "button.cancel" : "button.confirm")
      first?.focus()
    }
  }, [options])
  const ask = useCallback((o: ConfirmOptions) => {
    settle.current(false)
    opener.current = document.activeElement
    setOptions(o)
    return new Promise<boolean>((resolve) => {
      settle.current = resolve
    })
  }, [])
  const dialog = (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-body"
      onCancel={(e) => {
        e.preventDefault()
        close(false)
      }}
    >
      {options !== undefined && (
        <form method="dialog" onSubmit={(e) => e.preventDefault()}>
          <h2 id="confirm-title">{options.title}</h2>
          <div id="confirm-body">{options.body}</div>
          <div class="actions">
            <button type="button" class="secondary cancel" onClick={() => close(false)}>Cancel</button>
            <button type="button" class={options.danger === true ? "danger confirm" : "confirm"} onClick={() => close(true)}>{options.confirm}</button>
          </div>
        </form>
      )}
    </dialog>
  )
  return { dialog, ask }
}

/**
 * A region that scrolls its wide content sideways inside itself (never the page), with a
 * visible cue while there is more to the right or left: a shadow at that edge and a line of
 * text. Focusable only when nothing inside it is (axe: scrollable-region-focusable).
 */
export const ScrollRegion = ({ label, children, focusable = false }: { label: string; children: ComponentChildren; focusable?: boolean }) => {
  const ref = useRef<HTMLDivElement>(null)
  const [edges, setEdges] = useState({ left: false, right: false })
  useEffect(() => {
    const el = ref.current
    if (el === null) return
    const measure = () => {
      const left = el.scrollLeft > 1
      const right = el.scrollLeft + el.clientWidth < el.scrollWidth - 1
      setEdges((e) => (e.left === left && e.right === right ? e : { left, right }))
    }
    measure()
    el.addEventListener("scroll", measure, { passive: true })
    const observer = new ResizeObserver(measure)
    observer.observe(el)
    if (el.firstElementChild !== null) observer.observe(el.firstElementChild)
    return () => {
      el.removeEventListener("scroll", measure)
      observer.disconnect()
    }
  }, [])
  const cls = `scroll-region${edges.left ? " more-left" : ""}${edges.right ? " more-right" : ""}`
  return (
    <div class="scroll-wrap">
      {(edges.left || edges.right) && (
        <p class="hint scroll-cue" aria-hidden="true">Scroll sideways for more columns {edges.right ? "→" : "←"}</p>
      )}
      <div class={cls} ref={ref} role="region" aria-label={label} tabIndex={focusable ? 0 : undefined}>
        {children}
      </div>
    </div>
  )
}
