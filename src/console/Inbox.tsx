/**
 * The inbox, where the console opens: every waiting step of the tenant's running tasks across
 * entities, oldest waiting first (GET /v1/inbox), for me, my groups or everyone; counts of what
 * kind of work waits; who each step waits for and who holds it; Claim and Release. "My groups"
 * is exact: the caller's groups come from the gateway (GET /v1/me, what `assignee=me` matches),
 * and a step is kept when one of its `group:` assignees is one of them. Pages with
 * the answer's cursor ("Load more"); the loaded list refreshes itself. Cards, not a table, so a
 * phone never scrolls sideways.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import type { InboxItem } from "../api/inbox.js"
import { gw, messageOf, statusOf } from "./api.js"
import { href } from "./router.js"
import { Badge, ErrorText, ScreenHeading, Time } from "./ui.js"
import { usePoll } from "./poll.js"
import { assigneesWord, awaitingPlural, awaitingWord, elapsed, grantKey, groupOf, plural } from "./words.js"

export const INBOX_REFRESH_MS = 10_000
const PAGE = 50

type View = "mine" | "groups" | "all"

const VIEWS: ReadonlyArray<{ readonly id: View; readonly label: string }> = [
  { id: "mine", label: "Mine" },
  { id: "groups", label: "My groups" },
  { id: "all", label: "All" }
]

/** The query of a view: "Mine" and "My groups" both ask for `assignee=me` (the caller and their groups). */
const queryOf = (view: View) => (view === "all" ? {} : { assignee: "me" })

/**
 * "My groups": of what waits for me, the steps assigned to one of my groups (compared as the
 * gateway compares them); a step assigned to me by name and to a group I am not in is not one.
 */
const keep = (view: View, groups: ReadonlySet<string>) => (item: InboxItem) =>
  view !== "groups" || item.assignees.some((a) => {
    const group = groupOf(a)
    return group !== undefined && groups.has(grantKey(group))
  })

const COMPONENTS = ["FILE_UPLOAD", "APPROVAL", "TABLE_REVIEW"]

interface Loaded {
  readonly items: ReadonlyArray<InboxItem>
  readonly nextCursor: string | undefined
}

const VIEW_KEY = "console.inbox.view"
const savedView = (): View => {
  try {
    const v = sessionStorage.getItem(VIEW_KEY)
    return v === "groups" || v === "all" ? v : "mine"
  } catch {
    return "mine"
  }
}

export const Inbox = () => {
  const [view, setView] = useState<View>(savedView)
  const [loaded, setLoaded] = useState<Loaded | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [loadingMore, setLoadingMore] = useState(false)
  const [now, setNow] = useState(() => Date.now())
  // Per task: a claim or release in flight, and what the gateway said to the last one.
  const [busy, setBusy] = useState<ReadonlySet<string>>(new Set())
  const [said, setSaid] = useState<Readonly<Record<string, string>>>({})
  const generation = useRef(0)
  const me = usePoll(() => gw.inbox.getMe(), 0, [])
  const myGroups = new Set((me.data?.groups ?? []).map(grantKey))
  // "Mine" and "My groups" ask for assignee=me, which the gateway refuses (400) when nobody is
  // named: they wait for /v1/me, and with nobody named list nothing (the note below says why).
  // /v1/me failing: the inbox is asked all the same, and its answer is shown.
  const caller = me.data !== undefined ? (me.data.actor === null ? "nobody" : "named") : me.error !== undefined ? "unknown" : "loading"

  /** The first `count` items again (at least a page): the list refreshes without losing what was loaded. */
  const refresh = useCallback(async (v: View, count: number) => {
    const mine = ++generation.current
    try {
      const page = await gw.inbox.getInbox({ urlParams: { ...queryOf(v), limit: Math.min(200, Math.max(PAGE, count)) } })
      if (mine !== generation.current) return
      setLoaded({ items: page.items, nextCursor: page.nextCursor })
      setError(undefined)
      setNow(Date.now())
    } catch (e) {
      if (mine === generation.current) setError(messageOf(e))
    }
  }, [])

  const count = useRef(0)
  count.current = loaded?.items.length ?? 0
  useEffect(() => {
    setLoaded(undefined)
    setError(undefined)
    if (view !== "all" && caller === "loading") return
    if (view !== "all" && caller === "nobody") {
      setLoaded({ items: [], nextCursor: undefined })
      return
    }
    void refresh(view, PAGE)
    const timer = setInterval(() => {
      if (!document.hidden) void refresh(view, count.current)
    }, INBOX_REFRESH_MS)
    return () => {
      clearInterval(timer)
      generation.current++
    }
  }, [view, refresh, view === "all" ? "" : caller])

  const choose = (v: View) => {
    setView(v)
    try {
      sessionStorage.setItem(VIEW_KEY, v)
    } catch {
      // No storage: the view is not remembered.
    }
  }

  const more = async () => {
    if (loaded?.nextCursor === undefined) return
    setLoadingMore(true)
    const mine = generation.current
    try {
      const page = await gw.inbox.getInbox({ urlParams: { ...queryOf(view), limit: PAGE, cursor: loaded.nextCursor } })
      if (mine !== generation.current) return
      setLoaded((l) => ({ items: [...(l?.items ?? []), ...page.items], nextCursor: page.nextCursor }))
      setError(undefined)
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setLoadingMore(false)
    }
  }

  const act = async (item: InboxItem, release: boolean) => {
    const taskId = item.task.id
    setBusy((b) => new Set(b).add(taskId))
    setSaid(({ [taskId]: _, ...rest }) => rest)
    try {
      if (release) await gw.inbox.releaseClaim({ path: { taskId } })
      else {
        const claim = await gw.inbox.claim({ path: { taskId }, payload: {} })
        // Shown at once; the refresh below confirms it.
        setLoaded((l) => l && { ...l, items: l.items.map((i) => (i.task.id === taskId ? { ...i, claim } : i)) })
      }
    } catch (e) {
      const message = messageOf(e)
      setSaid((s) => ({ ...s, [taskId]: statusOf(e) === 409 ? `Someone else has it: ${message}` : message }))
    } finally {
      setBusy((b) => {
        const next = new Set(b)
        next.delete(taskId)
        return next
      })
      void refresh(view, count.current)
    }
  }

  // "My groups" waits for the caller's groups before it lists anything.
  const items = view === "groups" && me.data === undefined ? [] : (loaded?.items ?? []).filter(keep(view, myGroups))
  const counts = COMPONENTS.map((c) => [c, items.filter((i) => i.step.component === c).length] as const)
  const others = items.filter((i) => !COMPONENTS.includes(i.step.component)).length
  const atLeast = loaded?.nextCursor !== undefined ? "at least " : ""

  return (
    <>
      <ScreenHeading>Inbox</ScreenHeading>
      <div class="views" role="group" aria-label="Whose work">
        {VIEWS.map((v) => (
          <button key={v.id} type="button" class="chip" aria-pressed={view === v.id} onClick={() => choose(v.id)}>
            {v.label}
          </button>
        ))}
      </div>
      {view === "groups" && me.data !== undefined && (
        <p class="hint" data-testid="my-groups">
          {me.data.groups.length > 0
            ? `Your groups, as the gateway's edge names them: ${[...new Map(me.data.groups.map((g) => [grantKey(g), g])).values()].join(", ")}.`
            : me.data.identity === "edge"
            ? "The gateway's edge names no groups for you, so no step waits for your groups."
            : "Nobody is named at the gateway's edge, so you have no groups here."}
        </p>
      )}
      <ErrorText message={error ?? (view === "groups" ? me.error : undefined)} />
      {loaded === undefined && error === undefined && <p>Loading…</p>}
      {loaded !== undefined && (
        <>
          <ul class="counts" aria-label="Waiting, by kind">
            {counts.map(([c, n]) => (
              <li key={c}><span class="count">{atLeast}{n.toLocaleString()}</span> {awaitingPlural(c)}</li>
            ))}
            {others > 0 && <li><span class="count">{atLeast}{others.toLocaleString()}</span> Other steps</li>}
          </ul>
          {items.length === 0 && (
            <p>
              {view === "all"
                ? "Nothing waits: no running task has a step open."
                : "Nothing waits for you here. (Without an identity at the gateway's edge nobody is named, so only All lists the work.)"}
            </p>
          )}
          {items.length > 0 && (
            <ul class="inbox" aria-label="Waiting steps">
              {items.map((item) => (
                <InboxCard
                  key={item.task.id}
                  item={item}
                  now={now}
                  busy={busy.has(item.task.id)}
                  said={said[item.task.id]}
                  onClaim={() => act(item, false)}
                  onRelease={() => act(item, true)}
                />
              ))}
            </ul>
          )}
          {loaded.nextCursor !== undefined && (
            <p class="actions">
              <button type="button" class="secondary" disabled={loadingMore} onClick={more}>
                {loadingMore ? "Loading…" : "Load more"}
              </button>
            </p>
          )}
          {loaded.nextCursor === undefined && items.length > 0 && <p class="hint">{plural(items.length, "step")} waiting, all shown.</p>}
        </>
      )}
    </>
  )
}

const InboxCard = ({ item, now, busy, said, onClaim, onRelease }: {
  item: InboxItem
  now: number
  busy: boolean
  said: string | undefined
  onClaim: () => void
  onRelease: () => void
}) => {
  const titleId = `inbox-${item.task.id}`
  return (
    <li class={`inbox-item${item.overdue ? " overdue" : ""}`} aria-labelledby={titleId}>
      <div class="inbox-head">
        <a id={titleId} class="inbox-title" href={href.task(item.task.id)}>{item.task.title}</a>
        {item.overdue && <Badge value="FAILED" label="Overdue" />}
      </div>
      <p class="inbox-step">
        <span class="step-title">{item.step.title}</span> <span class="hint">({awaitingWord(item.step.component)})</span>
        {" · "}<a href={href.board(item.entity.id)}>{item.entity.name}</a>
      </p>
      <dl class="inbox-facts">
        <div><dt>Waiting</dt><dd><span title={item.waitingSince}>{elapsed(item.waitingSince, now)}</span></dd></div>
        {item.dueAt !== undefined && (
          <div><dt>Due</dt><dd class={item.overdue ? "error" : undefined}><Time iso={item.dueAt} />{item.overdue ? " (overdue)" : ""}</dd></div>
        )}
        <div><dt>For</dt><dd>{assigneesWord(item.assignees)}</dd></div>
        <div>
          <dt>Claimed by</dt>
          <dd data-testid="claim-holder">
            {item.claim !== undefined ? <>{item.claim.by}{item.claim.override ? " (took over from the agent)" : ""}</> : <span class="hint">nobody</span>}
          </dd>
        </div>
      </dl>
      <div class="actions">
        {item.claim === undefined
          ? <button type="button" disabled={busy} onClick={onClaim} aria-describedby={titleId}>Claim</button>
          : <button type="button" class="secondary" disabled={busy} onClick={onRelease} aria-describedby={titleId}>Release</button>}
        {!item.mayAct && <span class="hint">Not yours to act on now</span>}
      </div>
      <ErrorText message={said} />
    </li>
  )
}
