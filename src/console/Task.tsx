/**
 * A task: its steps with their status (a completed step opens what was decided there, in words:
 * its snapshot, fetched when opened, and the row actions taken at it), why a FAILED task failed,
 * whose the current step is (an agent's stays closed until a person takes it over), the current
 * step rendered by its `displayHint.component`, the live timeline and the task's files. The state
 * reloads every few seconds and after every action.
 */
import { useMemo, useRef, useState } from "preact/hooks"
import type { InboxItem } from "../api/inbox.js"
import type { TaskEvent, UiState, UiStep } from "../api/resources.js"
import { makeTimelineIndex, type TimelineIndex } from "../client/eventText.js"
import { gw, messageOf } from "./api.js"
import { Decision } from "./Decision.js"
import { failureOf, type Sentence, snapshotWords } from "./decidedWords.js"
import { useTaskEvents } from "./events.js"
import { Files } from "./Files.js"
import { FileUpload } from "./FileUpload.js"
import { usePoll } from "./poll.js"
import { currencyOf, rowLabel, rowsOf } from "./reviewModel.js"
import { href } from "./router.js"
import { TableReview } from "./TableReview.js"
import { controlsOpen, StepOwner, useStepOwner } from "./StepOwner.js"
import { PieceView, Timeline } from "./Timeline.js"
import { type ConsoleKnown, entriesOf, type KnownRow } from "./timelineWords.js"
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

/** Row actions are the record of a review: these event types tell them. */
const ROW_EVENTS = new Set(["row.edited", "row.rejected", "row.resolved"])

export const Task = ({ taskId }: { taskId: string }) => {
  const ui = usePoll(() => gw.tasks.getUi({ path: { taskId } }), TASK_REFRESH_MS, [taskId])
  const [version, setVersion] = useState(0)
  const known = useKnown(taskId, ui.data?.step, ui.data?.steps)
  const feed = useTaskEvents(taskId)
  // Agents' and files' names, as the timeline tells them.
  const index = useMemo(() => {
    const ix = makeTimelineIndex()
    for (const e of feed.events) ix.add(e)
    return ix
  }, [feed.events])
  const me = usePoll(() => gw.inbox.getMe(), 0, [])
  const running = ui.data?.task.status === "IN_PROGRESS" && ui.data.step !== null
  const entityId = typeof ui.data?.task.entityId === "string" ? ui.data.task.entityId : undefined
  const workflowId = typeof ui.data?.task.workflowId === "string" ? ui.data.task.workflowId : undefined
  const owner = useStepOwner(
    { id: taskId, entityId, workflowId },
    ui.data?.step != null ? { id: ui.data.step.id, component: ui.data.step.displayHint.component } : undefined,
    running,
    TASK_REFRESH_MS
  )
  const [forced, setForced] = useState<string | undefined>()
  const changed = () => {
    setVersion((v) => v + 1)
    ui.reload()
    owner.reload()
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
  // A review table gets the page's full width; the timeline and files go below it.
  const wide = step?.displayHint.component === "TABLE_REVIEW"
  const item: InboxItem | null | undefined = owner.item
  const isForced = forced !== undefined && forced === step?.id
  const current = (
    <section aria-labelledby="current-heading" class="current">
      <h2 id="current-heading">{step === null ? "No current step" : `Current step: ${step.title}`}</h2>
      {step !== null && item !== null && item !== undefined && (
        <StepOwner
          item={item}
          me={me.data}
          agentName={index.agentName}
          forced={isForced}
          onForce={() => setForced(step.id)}
          onChanged={changed}
        />
      )}
      {step === null
        ? task.status === "FAILED"
          ? <FailedBecause taskId={taskId} events={feed.events} known={known} index={index} />
          : <p>{task.status === "COMPLETED" ? "This task is complete." : "Nothing to act on."}</p>
        : !owner.loaded
        ? <p>Loading…</p>
        : controlsOpen(item, isForced) && <CurrentStep key={step.id} taskId={taskId} step={step} events={feed.events} onDone={changed} />}
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
      <Steps taskId={taskId} steps={steps} known={known} events={feed.events} index={index} />
      {wide && current}
      <div class="grid">
        <div>
          {!wide && current}
          <Files taskId={taskId} version={version} />
          <p class="ids"><CopyId id={taskId} label="Task id" /></p>
        </div>
        <div>
          <Timeline feed={feed} known={known} />
        </div>
      </div>
    </>
  )
}

const CurrentStep = ({ taskId, step, events, onDone }: { taskId: string; step: UiStep; events: ReadonlyArray<TaskEvent>; onDone: () => void }) => {
  const component = step.displayHint.component
  if (component === "FILE_UPLOAD") return <FileUpload taskId={taskId} step={step} onDone={onDone} />
  if (component === "TABLE_REVIEW") return <TableReview taskId={taskId} step={step} events={events} onDone={onDone} />
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

/** A sentence of what was done: who, what, when. */
export const SentenceView = ({ sentence }: { sentence: Sentence }) => (
  <>
    {sentence.who !== undefined && <><strong class="who">{sentence.who}</strong>{" "}</>}
    {sentence.what.map((p, i) => <PieceView key={i} piece={p} />)}
    {sentence.at !== undefined && <>{" "}<span class="hint">(<Time iso={sentence.at} />)</span></>}
  </>
)

/** Why a FAILED task failed, from its snapshots (fetched once) and its timeline. */
const FailedBecause = ({ taskId, events, known, index }: { taskId: string; events: ReadonlyArray<TaskEvent>; known: ConsoleKnown; index: TimelineIndex }) => {
  const snapshots = usePoll(() => gw.tasks.getSnapshots({ path: { taskId } }), 0, [taskId])
  if (snapshots.data === undefined && snapshots.error === undefined) return <p>This task failed. Loading why…</p>
  const why = failureOf(snapshots.data, events, known, index)
  return (
    <div class="panel failed" data-testid="failure">
      <p><strong>This task failed.</strong></p>
      <p>{why !== undefined ? <>Why: <SentenceView sentence={why} />.</> : "Nothing recorded says why: no step was rejected and the workflow gave no reason."}</p>
    </div>
  )
}

/** What was decided at one completed step, in words: the snapshot's sentence and facts, and the row actions taken at it. */
const DecidedAt = ({ stepId, snapshot, events, known, index }: {
  stepId: string
  snapshot: unknown
  events: ReadonlyArray<TaskEvent>
  known: ConsoleKnown
  index: TimelineIndex
}) => {
  const words = snapshotWords(snapshot, stepId, known, index)
  const rowEntries = entriesOf(
    events.filter((e) => ROW_EVENTS.has(e.type) && e.origin === "gateway" && e.payload.stepId === stepId),
    known,
    index
  ).filter((e) => e.what !== undefined)
  return (
    <div class="decided" role="group" aria-label={`What was decided at ${known.stepTitle(stepId)}`}>
      <p><SentenceView sentence={words.sentence} />.</p>
      {words.facts.length > 0 && (
        <dl class="facts">
          {words.facts.map(([label, text]) => <div key={label}><dt>{label}</dt><dd>{text}</dd></div>)}
        </dl>
      )}
      {rowEntries.length > 0 && (
        <>
          <p class="hint">Rows acted on at this step:</p>
          <ul class="row-actions">
            {rowEntries.map((entry) => (
              <li key={entry.events[0]!.position}>
                {entry.who !== undefined && <><strong class="who">{entry.who}</strong>{" "}</>}
                {entry.what!.map((p, i) => <PieceView key={i} piece={p} />)}{" "}
                <span class="hint">(<Time iso={entry.events[entry.events.length - 1]!.createdAt} />)</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  )
}

const Steps = ({ taskId, steps, known, events, index }: {
  taskId: string
  steps: UiState["steps"]
  known: ConsoleKnown
  events: ReadonlyArray<TaskEvent>
  index: TimelineIndex
}) => {
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
                  ? snapshot.value === null
                    ? <p>No snapshot was recorded.</p>
                    : <DecidedAt stepId={s.id} snapshot={snapshot.value} events={events} known={known} index={index} />
                  : snapshot?.error === undefined && <p>Loading…</p>}
              </div>
            )}
          </li>
        ))}
      </ol>
    </section>
  )
}
