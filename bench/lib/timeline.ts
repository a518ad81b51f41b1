/**
 * S7's timeline probe, read as a client reads a timeline: the default answer of
 * GET /v1/tasks/:id/events holds about SVC_EVENTS_PAGE_BYTES (1 MiB) and at most 10,000 events,
 * and one that stops before the end carries `hasMore: true` and `nextAfter` (README, "Following a
 * task's timeline"). Counting only the first answer's events is wrong for a timeline beyond the
 * budget.
 */

/**
 * The events of a whole timeline from its default answer `first`, reading on with
 * `?after=<nextAfter>` (`readAfter`) until an answer comes without it: their count when every
 * answer is a 200 whose `hasMore`/`nextAfter` agree with its last event and each position comes
 * once, else -1.
 */
export const countWholeTimeline = async (
  first: unknown,
  readAfter: (after: string) => Promise<Response>,
  maxAnswers = 1000
): Promise<number> => {
  let body = first as { events?: unknown; hasMore?: unknown; nextAfter?: unknown } | null
  let count = 0
  const seen = new Set<string>()
  let last: string | undefined
  for (let answers = 1; answers <= maxAnswers; answers++) {
    if (body === null || !Array.isArray(body.events)) return -1
    const events = body.events as Array<{ position?: unknown }>
    for (const e of events) {
      if (typeof e.position !== "string" || seen.has(e.position)) return -1
      seen.add(e.position)
      last = e.position
    }
    count += events.length
    if (body.nextAfter === undefined) return body.hasMore === undefined ? count : -1
    if (body.hasMore !== true || body.nextAfter !== last || last === undefined) return -1
    const res = await readAfter(last)
    if (res.status !== 200) return -1
    body = (await res.json()) as typeof body
  }
  return -1
}
