/**
 * The bytes of request bodies the server holds at once, across all requests
 * (SVC_MAX_BODY_BYTES_IN_FLIGHT), and per client (SVC_MAX_BODY_BYTES_PER_CLIENT). A body is held
 * from the moment it is admitted until its response closes: its buffer, its text and its parsed
 * value live that long, about three times the body's size for a base64 upload. Admission is first
 * come, first served: a request that does not fit waits (SVC_BODY_BUDGET_WAIT_MS) behind the ones
 * before it, so a large body is not overtaken for ever by small ones; past the wait it is refused
 * (nodeServer.ts answers 503 with Retry-After). A body larger than the whole budget is admitted
 * only when no other body is held, so that a budget set below SVC_MAX_BODY_BYTES slows such
 * requests down but never refuses them all.
 *
 * A client's share: what one client holds may not pass `perClient`, except for its first body
 * (a client holding nothing is always let in, budget permitting). A request waiting on its own
 * client's share holds up nobody else: the queue's order is kept among those waiting on the
 * budget as a whole.
 */
/**
 * A body up to this size is admitted at once, over the budget if need be: the API's ordinary
 * calls (an action, an event) are never held up or refused because large uploads, or clients
 * that declare large bodies and send them slowly, hold the budget. Bounded all the same: at most
 * one per connection (SVC_MAX_CONNECTIONS x 64 KiB = 64 MiB by default).
 */
export const SMALL_BODY_BYTES = 64 * 1024

interface Waiting {
  readonly bytes: number
  readonly client: string
  readonly grant: () => void
}

export class BodyBudget {
  private held = 0
  private readonly byClient = new Map<string, number>()
  private readonly waiting: Array<Waiting> = []

  constructor(readonly capacity: number, readonly perClient: number = Number.POSITIVE_INFINITY) {}

  /** Bytes held now. */
  get inFlight(): number {
    return this.held
  }

  /** Bytes `client` holds now. */
  heldBy(client: string): number {
    return this.byClient.get(client) ?? 0
  }

  private fits(bytes: number): boolean {
    return this.held + bytes <= this.capacity || this.held === 0
  }

  private withinShare(bytes: number, client: string): boolean {
    const mine = this.heldBy(client)
    return mine === 0 || mine + bytes <= this.perClient
  }

  private add(bytes: number, client: string): void {
    this.held += bytes
    this.byClient.set(client, this.heldBy(client) + bytes)
  }

  /** Takes `bytes` whether or not they fit (a small body, which never waits: SMALL_BODY_BYTES). */
  force(bytes: number, client = ""): void {
    this.add(bytes, client)
  }

  /** Someone waits for the budget as a whole (not only for their own client's share). */
  private queued(): boolean {
    return this.waiting.some((w) => this.withinShare(w.bytes, w.client))
  }

  /**
   * Takes `bytes` now if they fit, within `client`'s share, and nobody is waiting before
   * (`ahead`: whether or not anybody waits, for the next chunk of a body already admitted);
   * false otherwise.
   */
  tryTake(bytes: number, ahead = false, client = ""): boolean {
    if ((!ahead && this.queued()) || !this.fits(bytes) || !this.withinShare(bytes, client)) return false
    this.add(bytes, client)
    return true
  }

  /**
   * Takes `bytes` as soon as they fit (`granted` is called then), or calls `timedOut` after
   * `waitMs`. Returns the cancel: the request went away before either (true when it was still
   * waiting, neither called).
   */
  take(bytes: number, waitMs: number, granted: () => void, timedOut: () => void, client = ""): () => boolean {
    if (this.tryTake(bytes, false, client)) {
      granted()
      return () => false
    }
    let settled = false
    const entry: Waiting = {
      bytes,
      client,
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
      if (settled) return false
      settled = true
      clearTimeout(timer)
      leave()
      return true
    }
  }

  /** Gives back `bytes` `client` took before; those waiting are admitted in order while they fit. */
  release(bytes: number, client = ""): void {
    this.held = Math.max(0, this.held - bytes)
    const left = this.heldBy(client) - bytes
    if (left > 0) this.byClient.set(client, left)
    else this.byClient.delete(client)
    this.admitWaiting()
  }

  private admitWaiting(): void {
    for (let i = 0; i < this.waiting.length;) {
      const next = this.waiting[i]!
      // Waiting on its own client's share: it holds up nobody behind it.
      if (!this.withinShare(next.bytes, next.client)) {
        i++
        continue
      }
      if (!this.fits(next.bytes)) return
      this.waiting.splice(i, 1)
      this.add(next.bytes, next.client)
      next.grant()
    }
  }
}
