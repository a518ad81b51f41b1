/**
 * "Start task": a form generated from the chosen workflow's startParams. Types become inputs,
 * enums choices, defaults are filled in; required keys, types and patterns are checked before
 * sending, and a 400 naming `context.<key>` is shown at that key's input. Keys are labelled in
 * words, and a pattern is told as the format it asks for ("YYYY-MM"), never as a regular
 * expression; a parameter's own description wins as its hint. While the period is typed, the form
 * warns when the entity already has a task of this workflow for it (the entity's task list, read
 * once: a task's title names its period).
 */
import { useMemo, useState } from "preact/hooks"
import type { StartParam, WorkflowEntry } from "../api/resources.js"
import { fieldOfMessage, gw, messageOf } from "./api.js"
import { usePoll } from "./poll.js"
import { href, navigate } from "./router.js"
import { type Draft, errorWords, hintOf, initialDraft, parseDraft, tasksForPeriod } from "./startForm.js"
import { Badge, ErrorText, ScreenHeading, Time } from "./ui.js"
import { humanize } from "./words.js"

/** The start parameter that names a task's period. */
const PERIOD_KEY = "period"


const inputId = (key: string) => `param-${key}`
const errorId = (key: string) => `param-${key}-error`

export const StartTask = ({ entityId }: { entityId: string }) => {
  const workflows = usePoll(() => gw.entities.listWorkflows({ path: { entityId } }), 0, [entityId])
  const [workflowId, setWorkflowId] = useState("")
  const chosen = workflows.data?.find((w) => w.id === workflowId) ?? workflows.data?.[0]
  return (
    <>
      <ScreenHeading>Start a task</ScreenHeading>
      <p><a href={href.board(entityId)}>Back to the task board</a></p>
      <ErrorText message={workflows.error} />
      {workflows.data === undefined && workflows.error === undefined && <p>Loading…</p>}
      {workflows.data !== undefined && workflows.data.length === 0 && <p>No workflow can be started here.</p>}
      {workflows.data !== undefined && chosen !== undefined && (
        <>
          <div class="field">
            <label for="workflow">Workflow</label>
            <select id="workflow" value={chosen.id} onChange={(e) => setWorkflowId(e.currentTarget.value)}>
              {workflows.data.map((w) => <option key={w.id} value={w.id}>{w.name}</option>)}
            </select>
          </div>
          <StartForm key={chosen.id} entityId={entityId} workflow={chosen} />
        </>
      )}
    </>
  )
}

const StartForm = ({ entityId, workflow }: { entityId: string; workflow: WorkflowEntry }) => {
  const params = useMemo(() => workflow.startParams ?? [], [workflow])
  const [draft, setDraft] = useState<Draft>(() => initialDraft(params))
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [formError, setFormError] = useState<string | undefined>()
  const [sending, setSending] = useState(false)
  const set = (key: string, value: string | boolean) => setDraft((d) => ({ ...d, [key]: value }))
  const existing = usePoll(() => gw.entities.listTasks({ path: { entityId } }), 0, [entityId])
  const periodParam = params.find((p) => p.key === PERIOD_KEY)
  const period = periodParam === undefined ? undefined : parseDraft([periodParam], draft).context[PERIOD_KEY]
  const same = typeof period === "string" && existing.data !== undefined ? tasksForPeriod(existing.data, workflow.id, period) : []

  const submit = async (event: Event) => {
    event.preventDefault()
    setFormError(undefined)
    const parsed = parseDraft(params, draft)
    setErrors(parsed.errors)
    const firstBad = params.find((p) => parsed.errors[p.key] !== undefined)
    if (firstBad !== undefined) {
      document.getElementById(inputId(firstBad.key))?.focus()
      return
    }
    setSending(true)
    try {
      const created = await gw.entities.createTask({ path: { entityId }, payload: { workflowId: workflow.id, context: parsed.context } })
      navigate(href.task(created.id))
    } catch (e) {
      const message = messageOf(e)
      const key = fieldOfMessage(message)
      if (key !== undefined && params.some((p) => p.key === key)) {
        setErrors({ [key]: message.replace(/^context\.[^:]+:\s*/, "") })
        document.getElementById(inputId(key))?.focus()
      } else setFormError(message)
    } finally {
      setSending(false)
    }
  }

  return (
    <form onSubmit={submit} noValidate aria-label={`Start ${workflow.name}`}>
      {workflow.startParams === undefined && <p class="hint">This workflow's parameters are unknown; it starts with an empty context.</p>}
      {params.map((p) => <ParamInput key={p.key} param={p} value={draft[p.key]} error={errors[p.key]} onInput={(v) => set(p.key, v)} />)}
      {same.length > 0 && (
        <div class="panel warn" role="status" data-testid="same-period">
          <p>
            <strong>This entity already has {same.length === 1 ? "a task" : `${same.length} tasks`} of {workflow.name} for {String(period)}:</strong>
          </p>
          <ul>
            {same.map((t) => (
              <li key={t.id}>
                <a href={href.task(t.id)}>{t.title}</a> <Badge value={t.status} />{" "}
                <span class="hint">started <Time iso={t.createdAt} /></span>
              </li>
            ))}
          </ul>
          <p>Starting another makes a second task for the same period.</p>
        </div>
      )}
      <ErrorText message={formError} />
      <div class="actions">
        <button type="submit" disabled={sending}>Start task</button>
      </div>
    </form>
  )
}

const ParamInput = ({ param, value, error, onInput }: {
  param: StartParam
  value: string | boolean | undefined
  error: string | undefined
  onInput: (value: string | boolean) => void
}) => {
  const id = inputId(param.key)
  const hint = hintOf(param)
  const described = [hint !== undefined ? `${id}-hint` : "", error !== undefined ? errorId(param.key) : ""]
    .filter((s) => s !== "").join(" ") || undefined
  const common = {
    id,
    name: param.key,
    "aria-invalid": error !== undefined ? ("true" as const) : undefined,
    "aria-describedby": described,
    "aria-required": param.required ? ("true" as const) : undefined
  }
  const name = humanize(param.key)
  const label = `${name}${param.required ? " (required)" : ""}`
  let control
  if (param.enum !== undefined && param.enum.length > 0) {
    control = (
      <select {...common} value={String(value ?? "")} onChange={(e) => onInput(e.currentTarget.value)}>
        {(param.required || param.default === undefined) && <option value="">Choose…</option>}
        {param.enum.map((v, i) => <option key={i} value={String(i)}>{typeof v === "string" ? v : JSON.stringify(v)}</option>)}
      </select>
    )
  } else if (param.type === "boolean") {
    control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onInput(e.currentTarget.checked)} />
  } else if (param.type === "array" || param.type === "object") {
    control = <textarea {...common} value={String(value ?? "")} onInput={(e) => onInput(e.currentTarget.value)} />
  } else {
    control = (
      <input
        {...common}
        type="text"
        inputMode={param.type === "number" ? "decimal" : undefined}
        value={String(value ?? "")}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
    )
  }
  return (
    <div class="field">
      {param.type === "boolean"
        ? <label class="check">{control} {label}</label>
        : <label for={id}>{label}</label>}
      {hint !== undefined && <p class="hint" id={`${id}-hint`}>{hint}</p>}
      {param.type !== "boolean" && control}
      {error !== undefined && <p class="error" id={errorId(param.key)}>{name} {errorWords(param, error)}</p>}
    </div>
  )
}
