/**
 * The bytes of request bodies the server holds at once, across all requests
 * (SVC_MAX_BODY_BYTES_IN_FLIGHT). A body is held from the moment it is admitted until its
 * response closes: its buffer, its text and its parsed value live that long, about three times
 * the body's size for a base64 upload. Admission is first come, first served: a request that
 * does not fit waits (SVC_BODY_BUDGET_WAIT_MS) behind the ones before it, so a large body is not
 * overtaken for ever by small ones; past the wait it is refused (nodeServer.ts answers 503 with
 * Retry-After). A body larger than the whole budget is admitted only when no other body is held,
 * so that a budget set below SVC_MAX_BODY_BYTES slows such requests down but never refuses them all.
 */
/**
 * A body up to this size is admitted at once, over the budget if need be: the API's ordinary
 * calls (an action, an event) are never held up or refused because large uploads, or clients
 * that declare large bodies and send them slowly, hold the budget. Bounded all the same: at most
 * one per connection (SVC_MAX_CONNECTIONS x 64 KiB = 64 MiB by default).
 */
export const SMALL_BODY_BYTES = 64 * 1024

export class BodyBudget {
  private held = 0
  private readonly waiting: Array<{ readonly bytes: number; readonly grant: () => void }> = []

  constructor(readonly capacity: number) {}

  /** Bytes held now. */
  get inFlight(): number {
    return this.held
  }

  private fits(bytes: number): boolean {
    return this.held + bytes <= this.capacity || this.held === 0
  }

  /** Takes `bytes` whether or not they fit (a small body, which never waits: SMALL_BODY_BYTES). */
  force(bytes: number): void {
    this.held += bytes
  }

  /**
   * Takes `bytes` now if they fit and nobody is waiting before (`ahead`: whether or not anybody
   * waits, for the next chunk of a body already admitted); false otherwise.
   */
  tryTake(bytes: number, ahead = false): boolean {
    if ((!ahead && this.waiting.length > 0) || !this.fits(bytes)) return false
    this.held += bytes
    return true
  }

  /**
   * Takes `bytes` as soon as they fit (`granted` is called then), or calls `timedOut` after
   * `waitMs`. Returns the cancel: the request went away before either.
   */
  take(bytes: number, waitMs: number, granted: () => void, timedOut: () => void): () => void {
    if (this.tryTake(bytes)) {
      granted()
      return () => {}
    }
    let settled = false
    const entry = {
      bytes,
      grant: () => {
        settled = true
        clearTimeout(timer)
        granted()
      }
    }
    const leave = () => {
      const i = this.waiting.indexOf(entry)
      if (i !== -1) this.waiting.splice(i, 1)
      // The one that left may have held up others that fit now.
      this.admitWaiting()
    }
    const timer = setTimeout(() => {
      if (settled) return
      settled = true
      leave()
      timedOut()
    }, waitMs)
    this.waiting.push(entry)
    return () => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      leave()
    }
  }

  /** Gives back `bytes` taken before; those waiting are admitted in order while they fit. */
  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes)
    this.admitWaiting()
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!
      this.held += next.bytes
      next.grant()
    }
  }
}
