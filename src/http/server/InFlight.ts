/**
 * The values in flight (a server's responses), as a doubly linked list: adding gives back the
 * value's removal, O(1), and a walk sees them in order, newest first.
 *
 * Not a Set: a Set that lives as long as the process has its table in the old space, and V8
 * allocates each rehash of such a table there too; a Set added to and deleted from on every
 * request rehashes every few requests. Under S1's load that was 40% of all the bytes reaching the
 * old space (a sampling heap profile counting what major collections free), whose growth paced a
 * Mark-Compact every 1.7-2.5 s. A list's links are one small young object per value.
 */
interface Link<T> {
  readonly value: T
  prev: Link<T> | undefined
  next: Link<T> | undefined
  removed: boolean
}

export class InFlight<T> {
  private head: Link<T> | undefined
  private count = 0

  get size(): number {
    return this.count
  }

  /** Adds `value`; the function returned removes it (a second call does nothing). */
  add(value: T): () => void {
    const link: Link<T> = { value, prev: undefined, next: this.head, removed: false }
    if (this.head !== undefined) this.head.prev = link
    this.head = link
    this.count++
    return () => this.remove(link)
  }

  private remove(link: Link<T>): void {
    if (link.removed) return
    link.removed = true
    if (link.prev !== undefined) link.prev.next = link.next
    else this.head = link.next
    if (link.next !== undefined) link.next.prev = link.prev
    link.prev = undefined
    link.next = undefined
    this.count--
  }

  /** The values now, newest first (a copy: removing while walking it is safe). */
  values(): Array<T> {
    const out: Array<T> = []
    for (let link = this.head; link !== undefined; link = link.next) out.push(link.value)
    return out
  }
}
