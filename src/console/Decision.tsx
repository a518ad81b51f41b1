/**
 * Approve / Reject the current step, with comments (sent as the decision's reason). Bound to the
 * step shown. Rejecting asks first; approving a review step while flagged rows are still open
 * warns first, counting what was really done (`review`: rows resolved, rejected, still open and
 * of those the ones edited but not marked resolved).
 */
import { useState } from "preact/hooks"
import type { UiStep } from "../api/resources.js"
import { gw, messageOf } from "./api.js"
import { ErrorText, useConfirm } from "./ui.js"
import { plural } from "./words.js"

/** What a review step's rows say was done: flagged rows still open (and of those, edited), resolved, rejected. */
export interface ReviewCounts {
  readonly open: number
  readonly openEdited: number
  readonly resolved: number
  readonly rejected: number
}

/** "1 row marked resolved, 2 rejected; 3 still open (1 of them edited, not marked resolved)". */
export const reviewWords = (c: ReviewCounts): string => {
  const done = [
    ...(c.resolved > 0 ? [`${plural(c.resolved, "row")} marked resolved`] : []),
    ...(c.rejected > 0 ? [`${plural(c.rejected, "row")} rejected`] : [])
  ]
  const open = `${plural(c.open, "flagged row")} still open` +
    (c.openEdited > 0 ? ` (${c.openEdited === c.open ? (c.open === 1 ? "edited" : "all edited") : `${c.openEdited.toLocaleString()} of them edited`}, not marked resolved)` : "")
  return done.length > 0 ? `${done.join(", ")}; ${open}` : `Nothing resolved or rejected yet; ${open}`
}

export const Decision = ({ taskId, step, review, onDone }: {
  taskId: string
  step: Pick<UiStep, "id" | "title">
  review?: ReviewCounts | undefined
  onDone: () => void
}) => {
  const attention = review?.open ?? 0
  const [comments, setComments] = useState("")
  const [error, setError] = useState<string | undefined>()
  const [sending, setSending] = useState(false)
  const { dialog, ask } = useConfirm()
  const said = comments.trim() !== "" ? <p>Your comments go with it: <q>{comments.trim()}</q></p> : null

  const decide = async (type: "approved" | "rejected") => {
    const go = type === "rejected"
      ? await ask({
        title: `Reject “${step.title}”?`,
        body: <><p>The step is decided as rejected and the task moves on as its workflow says.</p>{said}</>,
        confirm: "Reject step",
        danger: true
      })
      : attention > 0
      ? await ask({
        title: `${plural(attention, "flagged row")} ${attention === 1 ? "is" : "are"} still open`,
        body: (
          <>
            <p>{reviewWords(review!)}.</p>
            <p>
              Approving “{step.title}” now approves the review with {attention === 1 ? "that row" : "those rows"} not
              marked resolved. Approve anyway?
            </p>
            {said}
          </>
        ),
        confirm: "Approve anyway"
      })
      : true
    if (!go) return
    setSending(true)
    setError(undefined)
    try {
      await gw.tasks.action({ path: { taskId }, payload: { type, step: step.id, ...(comments !== "" ? { comments } : {}) } })
      setComments("")
      onDone()
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setSending(false)
    }
  }
  return (
    <form class="panel decision" aria-label="Decision" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for={`comments-${step.id}`}>Comments</label>
        <textarea id={`comments-${step.id}`} value={comments} onInput={(e) => setComments(e.currentTarget.value)} />
      </div>
      {review !== undefined && attention > 0 && <p class="warn" data-testid="review-counts">{reviewWords(review)}.</p>}
      <ErrorText message={error} />
      <div class="actions">
        <button type="button" disabled={sending} onClick={() => decide("approved")}>Approve</button>
        <button type="button" class="danger" disabled={sending} onClick={() => decide("rejected")}>Reject</button>
      </div>
      {dialog}
    </form>
  )
}
