/**
 * S7's timeline probe, read as a client reads a timeline since issue 22 item 7: the default answer
 * of GET /v1/tasks/:id/events holds about SVC_EVENTS_PAGE_BYTES (1 MiB) and at most 10,000
 * events, and one that stops before the end carries `hasMore: true` and `nextAfterSeq` (README,
 * "Following a task's timeline"). Counting only the first answer's events is wrong for a timeline
 * beyond the budget.
 */

/**
 * The events of a whole timeline from its default answer `first`, reading on with
 * `?afterSeq=<nextAfterSeq>` (`readAfter`) until an answer comes without it: their count when
 * every answer is a 200 whose `hasMore`/`nextAfterSeq` agree with its last event and the seqs
 * come once each in ascending order, else -1.
 */
export const countWholeTimeline = async (
  first: unknown,
  readAfter: (afterSeq: number) => Promise<Response>,
  maxAnswers = 1000
): Promise<number> => {
  let body = first as { events?: unknown; hasMore?: unknown; nextAfterSeq?: unknown } | null
  let count = 0
  let last = -1
  for (let answers = 1; answers <= maxAnswers; answers++) {
    if (body === null || !Array.isArray(body.events)) return -1
    const events = body.events as Array<{ seq?: unknown }>
    for (const e of events) {
      if (typeof e.seq !== "number" || e.seq <= last) return -1
      last = e.seq
    }
    count += events.length
    if (body.nextAfterSeq === undefined) return body.hasMore === undefined ? count : -1
    if (body.hasMore !== true || body.nextAfterSeq !== last) return -1
    const res = await readAfter(last)
    if (res.status !== 200) return -1
    body = (await res.json()) as typeof body
  }
  return -1
}
