/** Approve / Reject the current step, with comments (sent as the decision's reason). Bound to the step shown. */
import { useState } from "preact/hooks"
import { gw, messageOf } from "./api.js"
import { ErrorText } from "./ui.js"

export const Decision = ({ taskId, stepId, onDone }: { taskId: string; stepId: string; onDone: () => void }) => {
  const [comments, setComments] = useState("")
  const [error, setError] = useState<string | undefined>()
  const [sending, setSending] = useState(false)
  const decide = async (type: "approved" | "rejected") => {
    setSending(true)
    setError(undefined)
    try {
      await gw.tasks.action({ path: { taskId }, payload: { type, step: stepId, ...(comments !== "" ? { comments } : {}) } })
      setComments("")
      onDone()
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setSending(false)
    }
  }
  return (
    <form class="panel" aria-label="Decision" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for={`comments-${stepId}`}>Comments</label>
        <textarea id={`comments-${stepId}`} value={comments} onInput={(e) => setComments(e.currentTarget.value)} />
      </div>
      <ErrorText message={error} />
      <div class="actions">
        <button type="button" disabled={sending} onClick={() => decide("approved")}>Approve</button>
        <button type="button" class="danger" disabled={sending} onClick={() => decide("rejected")}>Reject</button>
      </div>
    </form>
  )
}
