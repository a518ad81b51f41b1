/** Small shared pieces: the screen heading (focused on arrival, for keyboard and screen-reader users), badges, errors. */
import type { ComponentChildren } from "preact"
import { useEffect, useRef } from "preact/hooks"

export const ScreenHeading = ({ children }: { children: ComponentChildren }) => {
  const ref = useRef<HTMLHeadingElement>(null)
  useEffect(() => {
    ref.current?.focus()
  }, [])
  return <h1 tabIndex={-1} ref={ref}>{children}</h1>
}

export const Badge = ({ value, label }: { value: string; label?: string }) => (
  <span class={`badge ${value.replace(/[^A-Za-z0-9_-]/g, "")}`}>{label ?? value}</span>
)

export const ErrorText = ({ id, message }: { id?: string; message: string | undefined }) =>
  message === undefined ? null : <p class="error" id={id} role="alert">{message}</p>

export const Json = ({ value, label }: { value: unknown; label: string }) => (
  <figure class="json">
    <figcaption class="hint">{label}</figcaption>
    <pre tabIndex={0} aria-label={label}>{JSON.stringify(value, null, 2)}</pre>
  </figure>
)
