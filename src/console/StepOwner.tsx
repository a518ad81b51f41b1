/**
 * Whose the current step is, above its controls: the people and groups it waits for, or its
 * agent (by name when the timeline names it), who holds its claim. An agent's step is not a
 * person's work: its controls stay closed until the person takes it over, which claims it with
 * `override` (the gateway records the take-over in the timeline, and with an identity at the
 * edge refuses a person's decision on an agent's step without it). Without an identity nobody
 * can be named, so the claim is refused; the controls then open with that said plainly.
 *
 * The step's assignment comes from the inbox (GET /v1/inbox, filtered to the task's entity and
 * workflow): the one answer that carries it.
 */
import { useEffect, useState } from "preact/hooks"
import type { InboxItem, Me } from "../api/inbox.js"
import { gw, messageOf } from "./api.js"
import { ErrorText } from "./ui.js"
import { agentWord, assigneesWord } from "./words.js"

/** At most this many inbox pages are read to find one task (200 items each). */
const MAX_PAGES = 10

/** The inbox item of a running task's current step, or null when the inbox does not list it. */
export const inboxItemOf = async (task: { id: string; entityId: string; workflowId: string; component: string }): Promise<InboxItem | null> => {
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await gw.inbox.getInbox({
      urlParams: {
        entityId: task.entityId,
        workflowId: task.workflowId,
        // The inbox takes component names of letters, digits, _ . - only; any other is not narrowed by.
        ...(/^[A-Za-z0-9_.-]{1,128}$/.test(task.component) ? { awaiting: task.component } : {}),
        limit: 200,
        ...(cursor !== undefined ? { cursor } : {})
      }
    })
    const found = answer.items.find((i) => i.task.id === task.id)
    if (found !== undefined) return found
    if (answer.nextCursor === undefined) return null
    cursor = answer.nextCursor
  }
  return null
}

/**
 * The current step's inbox item, reloaded every `everyMs` (and on `reload()`), kept for the step it
 * was read for: `loaded` is false until it has been read for this step (the controls wait for it,
 * so an agent's step never shows them first), and nothing is cleared while a reload is under way.
 */
export const useStepOwner = (
  task: { readonly id: string; readonly entityId: string | undefined; readonly workflowId: string | undefined },
  step: { readonly id: string; readonly component: string } | undefined,
  running: boolean,
  everyMs: number
): { readonly loaded: boolean; readonly item: InboxItem | null | undefined; readonly reload: () => void } => {
  const [state, setState] = useState<{ readonly key: string; readonly item: InboxItem | null } | undefined>()
  const [kick, setKick] = useState(0)
  const stepId = step?.id
  const key = JSON.stringify([task.id, stepId ?? null, step?.component ?? null, running, task.entityId ?? null, task.workflowId ?? null])
  useEffect(() => {
    let stopped = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const run = async () => {
      if (document.hidden) {
        timer = setTimeout(run, everyMs)
        return
      }
      let item: InboxItem | null = null
      try {
        if (running && step !== undefined && task.entityId !== undefined && task.workflowId !== undefined) {
          item = await inboxItemOf({ id: task.id, entityId: task.entityId, workflowId: task.workflowId, component: step.component })
        }
      } catch {
        // The inbox unavailable: the step is shown as before assignment was known (the gateway still refuses what is not allowed).
        item = null
      }
      if (stopped) return
      setState({ key, item: item !== null && item.step.id === stepId ? item : null })
      if (running) timer = setTimeout(run, everyMs)
    }
    void run()
    return () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [key, kick])
  const loaded = state?.key === key
  return { loaded, item: loaded ? state!.item : undefined, reload: () => setKick((k) => k + 1) }
}

/** Whether the step's controls are open: any step but an agent's, or an agent's once taken over. */
export const controlsOpen = (item: InboxItem | null | undefined, forced: boolean): boolean =>
  item?.agentId === undefined || item.claim?.override === true || forced

export const StepOwner = ({ item, me, agentName, forced, onForce, onChanged }: {
  item: InboxItem
  me: Me | undefined
  agentName: (id: string) => string | undefined
  /** Controls opened without a recorded take-over (no identity at the edge). */
  forced: boolean
  onForce: () => void
  onChanged: () => void
}) => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const agent = item.agentId !== undefined ? agentWord(item.agentId, agentName(item.agentId)) : undefined
  const people = item.assignees.filter((a) => !a.startsWith("agent:"))
  const mine = me?.actor !== null && me?.actor !== undefined && item.claim?.by === me.actor

  const takeOver = async () => {
    setBusy(true)
    setError(undefined)
    try {
      await gw.inbox.claim({ path: { taskId: item.task.id }, payload: { override: true } })
      onChanged()
    } catch (e) {
      if (me?.identity === "none") onForce()
      else setError(messageOf(e))
    } finally {
      setBusy(false)
    }
  }

  if (agent !== undefined) {
    return (
      <div class="panel owner agent" data-testid="step-owner">
        {item.claim?.override === true
          ? (
            <p>
              <strong>{mine ? "You took this step over" : `${item.claim.by} took this step over`}</strong> from {agent}
              <span class="hint"> (agent id <code class="mono">{item.agentId}</code>)</span>. What {mine ? "you do" : "they do"} here
              is recorded as {mine ? "yours" : "theirs"}, in the agent's place.
            </p>
          )
          : (
            <>
              <p>
                <strong>This is {agent}'s step</strong>
                <span class="hint"> (agent id <code class="mono">{item.agentId}</code>)</span>: the agent does this work,
                not you{people.length > 0 ? ` (${assigneesWord(people)} may take it over)` : ""}.
              </p>
              {forced
                ? (
                  <p class="warn">
                    Nobody is named at the gateway's edge, so the take-over cannot be recorded: what you do below completes the
                    agent's step, recorded without a name.
                  </p>
                )
                : (
                  <div class="actions">
                    <button type="button" class="secondary" disabled={busy} onClick={takeOver}>Take over from the agent</button>
                    <span class="hint">Taking it over is recorded in the timeline.</span>
                  </div>
                )}
            </>
          )}
        <ErrorText message={error} />
      </div>
    )
  }
  return (
    <p class="owner" data-testid="step-owner">
      <span class="hint">Waiting for</span> {assigneesWord(item.assignees, agentName)}
      {item.claim !== undefined && <>{" · "}<span class="hint">claimed by</span> {mine ? "you" : item.claim.by}</>}
      {!item.mayAct && <span class="hint"> · not yours to act on now</span>}
    </p>
  )
}
