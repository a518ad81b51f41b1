/**
 * Approve / Reject the current step, with comments (sent as the decision's reason). Bound to the
 * step shown. Rejecting asks first; approving a review step while rows still need attention
 * warns first (`attention`: how many).
 */
import { useState } from "preact/hooks"
import type { UiStep } from "../api/resources.js"
import { gw, messageOf } from "./api.js"
import { ErrorText, useConfirm } from "./ui.js"
import { plural } from "./words.js"

export const Decision = ({ taskId, step, attention = 0, onDone }: {
  taskId: string
  step: Pick<UiStep, "id" | "title">
  attention?: number
  onDone: () => void
}) => {
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
        title: `${plural(attention, "row")} still ${attention === 1 ? "needs" : "need"} attention`,
        body: (
          <>
            <p>
              Approving “{step.title}” now approves the review with {plural(attention, "row")} nobody has edited or
              rejected. Approve anyway?
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
      {attention > 0 && <p class="warn">{plural(attention, "row")} still {attention === 1 ? "needs" : "need"} attention.</p>}
      <ErrorText message={error} />
      <div class="actions">
        <button type="button" disabled={sending} onClick={() => decide("approved")}>Approve</button>
        <button type="button" class="danger" disabled={sending} onClick={() => decide("rejected")}>Reject</button>
      </div>
      {dialog}
    </form>
  )
}
