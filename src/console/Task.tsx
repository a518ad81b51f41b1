/**
 * A task: its steps with their status (a completed step opens its snapshot, fetched when
 * opened), the current step rendered by its `displayHint.component`, the live timeline and
 * the task's files. The state reloads every few seconds and after every action.
 */
import { useRef, useState } from "preact/hooks"
import type { UiState, UiStep } from "../api/resources.js"
import { gw, messageOf } from "./api.js"
import { Decision } from "./Decision.js"
import { Files } from "./Files.js"
import { FileUpload } from "./FileUpload.js"
import { usePoll } from "./poll.js"
import { currencyOf, rowLabel, rowsOf } from "./reviewModel.js"
import { href } from "./router.js"
import { TableReview } from "./TableReview.js"
import { Timeline } from "./Timeline.js"
import type { ConsoleKnown, KnownRow } from "./timelineWords.js"
import { Badge, CopyId, ErrorText, Json, ScreenHeading, Time } from "./ui.js"
import { humanize } from "./words.js"

export const TASK_REFRESH_MS = 3000

/**
 * What the timeline can name besides ids: the title of every step (the UI state's steps carry
 * their titles; a workspace service that sends none leaves the current step's title and the
 * others' ids in words) and the rows a table step listed, with the number the table shows them by. Kept for
 * the page's life, so a step's title stays once the task has moved on.
 */
const useKnown = (taskId: string, step: UiStep | null | undefined, steps: UiState["steps"] | undefined): ConsoleKnown => {
  const ref = useRef<{ taskId: string; titles: Map<string, string>; rows: Map<string, KnownRow>; known: ConsoleKnown } | undefined>(undefined)
  if (ref.current?.taskId !== taskId) {
    const titles = new Map<string, string>()
    const rows = new Map<string, KnownRow>()
    ref.current = {
      taskId,
      titles,
      rows,
      known: { stepTitle: (id) => titles.get(id) ?? humanize(id), row: (id) => rows.get(id), fieldLabel: (key) => humanize(key) }
    }
  }
  for (const s of steps ?? []) if (s.title !== undefined) ref.current.titles.set(s.id, s.title)
  if (step !== null && step !== undefined) {
    ref.current.titles.set(step.id, step.title)
    for (const r of rowsOf(step) ?? []) {
      const label = rowLabel(r)
      ref.current.rows.set(r.id, {
        number: r.number,
        ...(label !== undefined ? { label } : {}),
        ...(currencyOf(r, step.displayHint.config) !== undefined ? { currency: currencyOf(r, step.displayHint.config)! } : {})
      })
    }
  }
  return ref.current.known
}

export const Task = ({ taskId }: { taskId: string }) => {
  const ui = usePoll(() => gw.tasks.getUi({ path: { taskId } }), TASK_REFRESH_MS, [taskId])
  const [version, setVersion] = useState(0)
  const known = useKnown(taskId, ui.data?.step, ui.data?.steps)
  const changed = () => {
    setVersion((v) => v + 1)
    ui.reload()
  }
  if (ui.data === undefined) {
    return (
      <>
        <ScreenHeading>Task</ScreenHeading>
        {ui.error !== undefined
          ? <ErrorText message={ui.status === 404 ? "No such task." : ui.error} />
          : <p>Loading…</p>}
      </>
    )
  }
  const { task, step, steps } = ui.data
  const entityId = typeof task.entityId === "string" ? task.entityId : undefined
  // A review table gets the page's full width; the timeline and files go below it.
  const wide = step?.displayHint.component === "TABLE_REVIEW"
  const current = (
    <section aria-labelledby="current-heading" class="current">
      <h2 id="current-heading">{step === null ? "No current step" : `Current step: ${step.title}`}</h2>
      {step === null
        ? <p>{task.status === "COMPLETED" ? "This task is complete." : "Nothing to act on."}</p>
        : <CurrentStep key={step.id} taskId={taskId} step={step} onDone={changed} />}
    </section>
  )
  return (
    <>
      <ScreenHeading>{task.title}</ScreenHeading>
      <div class="task-meta">
        <span>Status: <Badge value={task.status} /></span>
        {typeof task.createdAt === "string" && <span class="hint">Started <Time iso={task.createdAt} /></span>}
        {entityId !== undefined && <a href={href.board(entityId)}>Back to the task board</a>}
      </div>
      <ErrorText message={ui.error} />
      <Steps taskId={taskId} steps={steps} known={known} />
      {wide && current}
      <div class="grid">
        <div>
          {!wide && current}
          <Files taskId={taskId} version={version} />
          <p class="ids"><CopyId id={taskId} label="Task id" /></p>
        </div>
        <div>
          <Timeline taskId={taskId} known={known} />
        </div>
      </div>
    </>
  )
}

const CurrentStep = ({ taskId, step, onDone }: { taskId: string; step: UiStep; onDone: () => void }) => {
  const component = step.displayHint.component
  if (component === "FILE_UPLOAD") return <FileUpload taskId={taskId} step={step} onDone={onDone} />
  if (component === "TABLE_REVIEW") return <TableReview taskId={taskId} step={step} onDone={onDone} />
  return (
    <>
      <p class="hint">{component === "APPROVAL" ? "Approve or reject this step." : `Step shown as ${component}.`}</p>
      {component !== "APPROVAL" && (
        <>
          <Json label="Step configuration" value={step.displayHint.config} />
          <Json label="Step arguments" value={step.args} />
        </>
      )}
      <Decision taskId={taskId} step={step} onDone={onDone} />
    </>
  )
}

const Steps = ({ taskId, steps, known }: { taskId: string; steps: UiState["steps"]; known: ConsoleKnown }) => {
  const [open, setOpen] = useState<string | undefined>()
  const [snapshot, setSnapshot] = useState<{ stepId: string; value?: unknown; error?: string } | undefined>()
  const toggle = async (stepId: string) => {
    if (open === stepId) return setOpen(undefined)
    setOpen(stepId)
    setSnapshot({ stepId })
    try {
      // Fetched when opened, every time: a snapshot is written when its step completes.
      const all = await gw.tasks.getSnapshots({ path: { taskId } })
      setSnapshot({ stepId, value: Object.hasOwn(all, stepId) ? all[stepId] : null })
    } catch (e) {
      setSnapshot({ stepId, error: messageOf(e) })
    }
  }
  return (
    <section aria-labelledby="steps-heading">
      <h2 id="steps-heading">Steps</h2>
      <ol class="steps">
        {steps.map((s) => (
          <li key={s.id} data-status={s.status} aria-current={s.status === "IN_PROGRESS" ? "step" : undefined}>
            <span class="step-title">{s.title ?? known.stepTitle(s.id)}</span> <Badge value={s.status} />{" "}
            {s.status === "COMPLETED" && (
              <button type="button" class="secondary small" aria-expanded={open === s.id} aria-controls={`snapshot-${s.id}`} onClick={() => toggle(s.id)}>
                {open === s.id ? "Hide" : "Show"} what was decided<span class="visually-hidden"> at {known.stepTitle(s.id)}</span>
              </button>
            )}
            {open === s.id && (
              <div id={`snapshot-${s.id}`}>
                {snapshot?.stepId === s.id && snapshot.error !== undefined && <p class="error">{snapshot.error}</p>}
                {snapshot?.stepId === s.id && "value" in snapshot
                  ? snapshot.value === null ? <p>No snapshot was recorded.</p> : <Json label={`What was decided at ${known.stepTitle(s.id)}`} value={snapshot.value} />
                  : snapshot?.error === undefined && <p>Loading…</p>}
              </div>
            )}
          </li>
        ))}
      </ol>
    </section>
  )
}
