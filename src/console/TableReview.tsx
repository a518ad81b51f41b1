/**
 * A TABLE_REVIEW step, built for the review: the rows that need attention first with the reason
 * in view, counts by status (which also filter), the configured columns with people's labels
 * (the rest on demand), amounts in their currency. Values are text; a cell is edited on demand
 * (keyboard: arrows move, Enter edits, Enter saves, Escape cancels; a tap or click edits), its
 * new value and validation error shown in place. The table is one Tab stop (a grid). Row
 * actions sit in a column pinned to the right edge of the table's own scrolling region, so
 * they are on screen whatever the width: Resolve marks a flagged row resolved (the gateway's
 * `resolve_flag` row action), Reject rejects it and asks first.
 *
 * A step whose args carry no rows gets its config and args shown and a row-action form taking
 * the row id. Approve / Reject decide the step itself (./Decision.tsx).
 */
import { memo } from "preact/compat"
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks"
import type { TaskEvent, UiStep } from "../api/resources.js"
import { fieldOfMessage, gw, messageOf } from "./api.js"
import { Decision, type ReviewCounts } from "./Decision.js"
import {
  cellText,
  type Column,
  columnsOf,
  currencyOf,
  draftOf,
  type ReviewRow,
  rowLabel,
  rowsOf,
  type Scalar,
  sortForReview,
  statusCounts,
  typedValue
} from "./reviewModel.js"
import { Badge, ErrorText, Json, ScrollRegion, useConfirm } from "./ui.js"
import { plural, statusWord } from "./words.js"

export { typedValue }

/** Rows rendered at first; more on request (a 2,000-row step stays quick to open). */
export const ROWS_PER_PAGE = 200

type Send = (
  body: { action: "edit_cell" | "reject_row" | "resolve_flag"; rowId: string; field?: string; value?: Scalar; expected?: Scalar }
) => Promise<string | undefined>

/** The rows of this step someone edited, by the timeline's record (`row.edited` at this step). */
const editedAt = (events: ReadonlyArray<TaskEvent>, stepId: string): ReadonlySet<string> => {
  const out = new Set<string>()
  for (const e of events) {
    if (e.type === "row.edited" && e.origin === "gateway" && e.payload.stepId === stepId && typeof e.payload.rowId === "string") out.add(e.payload.rowId)
  }
  return out
}

export const TableReview = ({ taskId, step, events = [], onDone }: {
  taskId: string
  step: UiStep
  events?: ReadonlyArray<TaskEvent>
  onDone: () => void
}) => {
  // The same config object while its content is the same: the task reloads every few seconds.
  const configJson = JSON.stringify(step.displayHint.config)
  const config = useMemo(() => step.displayHint.config, [configJson])
  const ledger = typeof config.ledger === "string" ? config.ledger : "expenses"
  const [notice, setNotice] = useState("")
  const latest = useRef({ taskId, stepId: step.id, ledger, onDone })
  latest.current = { taskId, stepId: step.id, ledger, onDone }
  const send: Send = useCallback(async (body) => {
    const { taskId, stepId, ledger, onDone } = latest.current
    try {
      await gw.tasks.rowAction({ path: { taskId }, payload: { ledger: ledger as "expenses", step: stepId, ...body } })
      onDone()
      return undefined
    } catch (e) {
      return messageOf(e)
    }
  }, [])
  const rows = useStableRows(rowsOf(step))
  const edited = editedAt(events, step.id)
  const open = rows?.filter((r) => r.status === "NEEDS_ATTENTION") ?? []
  const review: ReviewCounts = {
    open: open.length,
    openEdited: open.filter((r) => edited.has(r.id)).length,
    resolved: rows?.filter((r) => r.status === "RESOLVED").length ?? 0,
    rejected: rows?.filter((r) => r.status === "REJECTED").length ?? 0
  }
  return (
    <div>
      {rows !== undefined
        ? <RowsTable rows={rows} config={config} send={send} onNotice={setNotice} />
        : (
          <>
            <Json label="Step configuration" value={config} />
            <Json label="Step arguments" value={step.args} />
            <RowActionForm send={send} onNotice={setNotice} />
          </>
        )}
      <p class="ok" role="status">{notice}</p>
      <Decision taskId={taskId} step={step} review={rows !== undefined ? review : undefined} onDone={onDone} />
    </div>
  )
}

/** The same row objects while their content is the same (the task reloads every few seconds), so unchanged rows skip rendering. */
const useStableRows = (rows: ReadonlyArray<ReviewRow> | undefined) => {
  const cache = useRef(new Map<string, { json: string; row: ReviewRow }>())
  return useMemo(() => {
    if (rows === undefined) return undefined
    const next = new Map<string, { json: string; row: ReviewRow }>()
    const out = rows.map((r) => {
      const json = JSON.stringify(r)
      const old = cache.current.get(r.id)
      const kept = old !== undefined && old.json === json ? old : { json, row: r }
      next.set(r.id, kept)
      return kept.row
    })
    cache.current = next
    return out
  }, [rows === undefined ? undefined : JSON.stringify(rows)])
}

interface Editing {
  readonly rowId: string
  readonly field: string
  readonly draft: string
  readonly error?: string
  readonly saving?: boolean
}

/** Where the grid's focus is: a row (by id, stable under re-sorting) and a column index. */
interface Pos {
  readonly rowId: string
  readonly col: number
}

const RowsTable = ({ rows, config, send, onNotice }: {
  rows: ReadonlyArray<ReviewRow>
  config: Record<string, unknown>
  send: Send
  onNotice: (text: string) => void
}) => {
  const { shown, others } = useMemo(() => columnsOf(config, rows), [config, rows])
  const [extra, setExtra] = useState<ReadonlyArray<string>>([])
  const columns = useMemo(() => [...shown, ...others.filter((c) => extra.includes(c.key))], [shown, others, extra])
  const [filter, setFilter] = useState<string | undefined>()
  const [limit, setLimit] = useState(ROWS_PER_PAGE)
  const [editing, setEditing] = useState<Editing | undefined>()
  const [rowError, setRowError] = useState<string | undefined>()
  const [pos, setPos] = useState<Pos | undefined>()
  const wantFocus = useRef(false)
  const grid = useRef<HTMLTableElement>(null)
  const { dialog, ask } = useConfirm()

  const counts = useMemo(() => statusCounts(rows), [rows])
  // The row being edited stays in view even when a reload moves it out of the filter (its editor
  // would otherwise vanish, taking what was typed with it).
  const editingRow = editing?.rowId
  const sorted = useMemo(
    () => sortForReview(filter === undefined ? rows : rows.filter((r) => r.status === filter || r.id === editingRow)),
    [rows, filter, editingRow]
  )
  const visible = sorted.slice(0, limit)
  const lastCol = columns.length + 1
  const at: Pos | undefined = pos !== undefined && visible.some((r) => r.id === pos.rowId)
    ? { rowId: pos.rowId, col: Math.min(pos.col, lastCol) }
    : visible[0] !== undefined ? { rowId: visible[0].id, col: 0 } : undefined

  // Focus follows the keyboard's position once the cell is rendered (not on every reload).
  useLayoutEffect(() => {
    if (!wantFocus.current || at === undefined) return
    wantFocus.current = false
    grid.current?.querySelector<HTMLElement>(`[data-pos="${CSS.escape(`${at.rowId}:${at.col}`)}"]`)?.focus()
  })

  const state = useRef({ visible, columns, editing, at })
  state.current = { visible, columns, editing, at }

  /** `focus` false: the position follows a focus that is already where it should be (the actions cell's second button). */
  const moveTo = useCallback((rowId: string, col: number, focus = true) => {
    if (focus) wantFocus.current = true
    setPos((p) => (p?.rowId === rowId && p.col === col ? p : { rowId, col }))
  }, [])

  const startEdit = useCallback((row: ReviewRow, field: string) => {
    setEditing({ rowId: row.id, field, draft: draftOf(row.fields[field]) })
    setPos({ rowId: row.id, col: state.current.columns.findIndex((c) => c.key === field) + 1 })
  }, [])

  const cancelEdit = useCallback(() => {
    setEditing(undefined)
    wantFocus.current = true
  }, [])

  const save = useCallback(async (row: ReviewRow, column: Column, draft: string) => {
    const before = row.fields[column.key] ?? null
    if (draft === draftOf(before)) return cancelEdit()
    const value = typedValue(draft, before, undefined, column.kind === "money" || column.kind === "number")
    setEditing({ rowId: row.id, field: column.key, draft, saving: true })
    // `expected`: the value shown; a cell someone changed meanwhile is a 409 shown in the cell (nothing written).
    const error = await send({ action: "edit_cell", rowId: row.id, field: column.key, value, expected: before })
    // The person may have moved on to another cell meanwhile (leaving a cell saves it): its editor
    // and what is typed there stay; only this cell's own editor closes or shows the error.
    const still = (e: Editing | undefined) => e?.rowId === row.id && e.field === column.key
    const movedOn = !still(state.current.editing)
    if (error !== undefined) {
      // "value for amount_gross: must be a decimal number" -> "Amount gross must be a decimal number"
      const named = /^value for [^:]+:\s*(.*)$/s.exec(error)
      const said = named !== null ? `${column.label} ${named[1]}` : error
      if (movedOn) setRowError(`${column.label} of row ${row.number} was not saved: ${said}`)
      else setEditing({ rowId: row.id, field: column.key, draft, error: said })
      return
    }
    setEditing((e) => (still(e) ? undefined : e))
    if (!movedOn) wantFocus.current = true
    const shownValue = typeof value === "number" || typeof value === "string" ? cellText(value, column.kind, currencyOf(row, config)) : ""
    onNotice(`${column.label} of row ${row.number} saved${shownValue !== "" ? `: ${shownValue}` : " (now empty)"}`)
  }, [send, config, onNotice, cancelEdit])

  const reject = useCallback(async (row: ReviewRow) => {
    const label = rowLabel(row)
    const ok = await ask({
      title: `Reject row ${row.number}?`,
      body: (
        <p>
          Row {row.number}{label !== undefined ? ` (${label})` : ""} will be marked rejected and leaves the review.
          This cannot be undone from here.
        </p>
      ),
      confirm: `Reject row ${row.number}`,
      danger: true
    })
    if (!ok) return
    setRowError(undefined)
    const error = await send({ action: "reject_row", rowId: row.id })
    if (error !== undefined) setRowError(`Row ${row.number} was not rejected: ${error}`)
    else onNotice(`Row ${row.number} rejected`)
  }, [ask, send, onNotice])

  const resolve = useCallback(async (row: ReviewRow) => {
    setRowError(undefined)
    const error = await send({ action: "resolve_flag", rowId: row.id })
    if (error !== undefined) setRowError(`Row ${row.number} was not marked resolved: ${error}`)
    else onNotice(`Row ${row.number} marked resolved`)
  }, [send, onNotice])

  const onKeyDown = (e: KeyboardEvent) => {
    const { visible: list, editing: ed, at: here } = state.current
    if (ed !== undefined || here === undefined) return
    // The actions cell holds two buttons (Resolve, Reject): left and right move between them first.
    const button = e.target instanceof HTMLButtonElement && e.target.closest(".pin-right") !== null ? e.target : undefined
    if (button !== undefined && (e.key === "ArrowRight" || e.key === "ArrowLeft")) {
      const sibling = e.key === "ArrowRight" ? button.nextElementSibling : button.previousElementSibling
      if (sibling instanceof HTMLButtonElement) {
        e.preventDefault()
        // Focus only: the cell keeps one Tab stop (its first button), as the grid's roving focus has it.
        sibling.focus()
        return
      }
    }
    const r = list.findIndex((x) => x.id === here.rowId)
    const go = (ri: number, ci: number) => {
      e.preventDefault()
      const row = list[Math.max(0, Math.min(list.length - 1, ri))]
      if (row !== undefined) moveTo(row.id, Math.max(0, Math.min(lastCol, ci)))
    }
    switch (e.key) {
      case "ArrowDown": return go(r + 1, here.col)
      case "ArrowUp": return go(r - 1, here.col)
      case "ArrowRight": return go(r, here.col + 1)
      case "ArrowLeft": return go(r, here.col - 1)
      case "PageDown": return go(r + 10, here.col)
      case "PageUp": return go(r - 10, here.col)
      case "Home": return e.ctrlKey ? go(0, 0) : go(r, 0)
      case "End": return e.ctrlKey ? go(list.length - 1, lastCol) : go(r, lastCol)
      case "Enter":
      case "F2": {
        const row = list[r]
        const column = state.current.columns[here.col - 1]
        if (row !== undefined && column !== undefined && row.editable.includes(column.key)) {
          e.preventDefault()
          startEdit(row, column.key)
        }
      }
    }
  }

  if (rows.length === 0) return <p>This step has no rows to review.</p>
  const attention = rows.filter((r) => r.status === "NEEDS_ATTENTION").length
  const editableSomewhere = rows.some((r) => r.editable.length > 0)
  return (
    <section class="review" aria-labelledby="review-heading">
      <h3 id="review-heading" class="visually-hidden">Rows to review</h3>
      <p class="review-summary">
        {attention > 0 ? <strong>{plural(attention, "row needs", "rows need")} attention</strong> : <strong>No row needs attention</strong>}
        {" "}of {plural(rows.length, "row")}.
      </p>
      <div class="toolbar">
        <div class="filters" role="group" aria-label="Show rows by status">
          <button type="button" class="chip" aria-pressed={filter === undefined} onClick={() => setFilter(undefined)}>
            All <span class="count">{rows.length.toLocaleString()}</span>
          </button>
          {counts.map(([status, n]) => (
            <button type="button" key={status} class={`chip ${status}`} aria-pressed={filter === status} onClick={() => setFilter(filter === status ? undefined : status)}>
              {statusWord(status)} <span class="count">{n.toLocaleString()}</span>
            </button>
          ))}
        </div>
        {others.length > 0 && (
          <details class="columns-picker">
            <summary>More columns ({others.length})</summary>
            <fieldset>
              <legend class="visually-hidden">Columns to add</legend>
              {others.map((c) => (
                <label key={c.key} class="check">
                  <input
                    type="checkbox"
                    checked={extra.includes(c.key)}
                    onChange={(e) => setExtra((x) => (e.currentTarget.checked ? [...x, c.key] : x.filter((k) => k !== c.key)))}
                  />
                  {c.label}
                </label>
              ))}
            </fieldset>
          </details>
        )}
      </div>
      {editableSomewhere && (
        <p class="hint" id="grid-help">
          Click a value to change it. With the keyboard: arrow keys move, Enter edits, Enter saves, Escape cancels.
        </p>
      )}
      <ErrorText message={rowError} />
      <ScrollRegion label="Rows to review, scrollable">
        <table
          ref={grid}
          role="grid"
          class="grid-table"
          aria-label={`Rows to review (${plural(rows.length, "row")})`}
          aria-rowcount={sorted.length + 1}
          aria-describedby={editableSomewhere ? "grid-help" : undefined}
          onKeyDown={onKeyDown}
        >
          <thead>
            <tr aria-rowindex={1}>
              <th scope="col" class="pin-left">Row</th>
              {columns.map((c) => <th scope="col" key={c.key} class={c.kind === "money" || c.kind === "number" ? "num" : undefined}>{c.label}</th>)}
              <th scope="col" class="pin-right">Actions</th>
            </tr>
          </thead>
          <tbody>
            {visible.map((row, i) => (
              <Row
                key={row.id}
                row={row}
                index={i + 2}
                columns={columns}
                currency={currencyOf(row, config)}
                focusCol={at?.rowId === row.id ? at.col : -1}
                editing={editing?.rowId === row.id ? editing : undefined}
                onFocusCell={moveTo}
                onEdit={startEdit}
                onDraft={setEditing}
                onSave={save}
                onCancel={cancelEdit}
                onReject={reject}
                onResolve={resolve}
              />
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {sorted.length > visible.length && (
        <p class="actions">
          <button type="button" class="secondary" onClick={() => setLimit((n) => n + ROWS_PER_PAGE)}>
            Show {Math.min(ROWS_PER_PAGE, sorted.length - visible.length).toLocaleString()} more rows
          </button>
          <span class="hint">{(sorted.length - visible.length).toLocaleString()} not shown yet</span>
        </p>
      )}
      {dialog}
    </section>
  )
}

interface RowProps {
  readonly row: ReviewRow
  readonly index: number
  readonly columns: ReadonlyArray<Column>
  readonly currency: string | undefined
  readonly focusCol: number
  readonly editing: Editing | undefined
  readonly onFocusCell: (rowId: string, col: number, focus?: boolean) => void
  readonly onEdit: (row: ReviewRow, field: string) => void
  readonly onDraft: (e: Editing) => void
  readonly onSave: (row: ReviewRow, column: Column, draft: string) => void
  readonly onCancel: () => void
  readonly onReject: (row: ReviewRow) => void
  readonly onResolve: (row: ReviewRow) => void
}

const Row = memo(({ row, index, columns, currency, focusCol, editing, onFocusCell, onEdit, onDraft, onSave, onCancel, onReject, onResolve }: RowProps) => {
  const lastCol = columns.length + 1
  const canReject = row.status !== "REJECTED" && row.status !== "APPROVED" && row.status !== "RESOLVED"
  // Only a flagged row can be marked resolved (the ledger refuses it from any other status).
  const canResolve = row.status === "NEEDS_ATTENTION"
  const tab = (col: number) => (focusCol === col ? 0 : -1)
  return (
    <tr data-row-id={row.id} data-status={row.status} aria-rowindex={index}>
      <th scope="row" class="pin-left" tabIndex={tab(0)} data-pos={`${row.id}:0`} onFocus={() => onFocusCell(row.id, 0)}>
        <span class="num-label">{row.number}</span> <Badge value={row.status} />
      </th>
      {columns.map((c, ci) => {
        const col = ci + 1
        const value = row.fields[c.key]
        const canEdit = row.editable.includes(c.key)
        const text = cellText(value, c.kind, currency)
        const numeric = c.kind === "money" || c.kind === "number"
        if (editing?.field === c.key) {
          const errorId = `err-${row.id}-${c.key}`
          return (
            <td key={c.key} class={`editing${numeric ? " num" : ""}`}>
              <CellEditor
                key={`${row.id}:${c.key}`}
                label={`${c.label}, row ${row.number}`}
                editing={editing}
                errorId={errorId}
                numeric={numeric}
                onDraft={(draft) => onDraft({ rowId: row.id, field: c.key, draft })}
                onSave={(draft) => onSave(row, c, draft)}
                onCancel={onCancel}
              />
              {editing.error !== undefined && <p class="error" id={errorId}>{editing.error}</p>}
            </td>
          )
        }
        return (
          <td
            key={c.key}
            class={[numeric ? "num" : "", canEdit ? "editable" : "", text === "" ? "empty" : ""].join(" ").trim() || undefined}
            tabIndex={tab(col)}
            data-pos={`${row.id}:${col}`}
            aria-label={text === "" ? `${c.label}: empty` : undefined}
            onFocus={() => onFocusCell(row.id, col)}
            onClick={canEdit ? () => onEdit(row, c.key) : undefined}
          >
            {text === "" ? <span aria-hidden="true">—</span> : text}
          </td>
        )
      })}
      <td class="pin-right" tabIndex={canReject ? undefined : tab(lastCol)} data-pos={canReject ? undefined : `${row.id}:${lastCol}`}>
        {canResolve && (
          <button
            type="button"
            class="secondary small"
            tabIndex={tab(lastCol)}
            data-pos={`${row.id}:${lastCol}`}
            aria-label={`Resolve row ${row.number}`}
            onFocus={() => onFocusCell(row.id, lastCol)}
            onClick={() => onResolve(row)}
          >
            Resolve
          </button>
        )}
        {canReject
          ? (
            <button
              type="button"
              class="secondary small"
              tabIndex={canResolve ? -1 : tab(lastCol)}
              data-pos={canResolve ? undefined : `${row.id}:${lastCol}`}
              aria-label={`Reject row ${row.number}`}
              onFocus={() => onFocusCell(row.id, lastCol, !canResolve)}
              onClick={() => onReject(row)}
            >
              Reject
            </button>
          )
          : <span class="hint">{statusWord(row.status)}</span>}
      </td>
    </tr>
  )
})

const CellEditor = ({ label, editing, errorId, numeric, onDraft, onSave, onCancel }: {
  label: string
  editing: Editing
  errorId: string
  numeric: boolean
  onDraft: (draft: string) => void
  onSave: (draft: string) => void
  onCancel: () => void
}) => {
  const ref = useRef<HTMLInputElement>(null)
  const done = useRef(false)
  useEffect(() => {
    ref.current?.focus()
    ref.current?.select()
  }, [])
  // Focus back in the input after a refused save, so the person can correct it.
  useEffect(() => {
    if (editing.error === undefined) return
    done.current = false
    ref.current?.focus()
  }, [editing.error])
  return (
    <input
      ref={ref}
      class="cell-input"
      aria-label={label}
      value={editing.draft}
      inputMode={numeric ? "decimal" : undefined}
      disabled={editing.saving === true}
      aria-invalid={editing.error !== undefined ? "true" : undefined}
      aria-describedby={editing.error !== undefined ? errorId : undefined}
      onInput={(e) => onDraft(e.currentTarget.value)}
      onKeyDown={(e) => {
        e.stopPropagation()
        if (e.key === "Enter") {
          e.preventDefault()
          done.current = true
          onSave(e.currentTarget.value)
        } else if (e.key === "Escape") {
          e.preventDefault()
          done.current = true
          onCancel()
        }
      }}
      onBlur={(e) => {
        // Leaving the cell keeps what was typed, as a spreadsheet does; an unchanged cell just closes.
        if (done.current || editing.saving === true) return
        const input = e.currentTarget
        // Chrome also blurs an input as the page takes it out (the step decided elsewhere, the
        // editor closed under it): that is not the person leaving, so nothing half-typed is sent.
        queueMicrotask(() => {
          if (input.isConnected && !done.current) onSave(input.value)
        })
      }}
    />
  )
}

/** Without rows in the step's args: act on a row by its id. */
const RowActionForm = ({ send, onNotice }: { send: Send; onNotice: (text: string) => void }) => {
  const [rowId, setRowId] = useState("")
  const [field, setField] = useState("")
  const [value, setValue] = useState("")
  const [errors, setErrors] = useState<{ rowId?: string; field?: string; value?: string; form?: string }>({})
  const { dialog, ask } = useConfirm()
  const run = async (action: "edit_cell" | "reject_row" | "resolve_flag") => {
    const id = rowId.trim()
    if (action === "reject_row" && !(await ask({
      title: "Reject this row?",
      body: <p>Row <code class="mono">{id}</code> will be marked rejected. This cannot be undone from here.</p>,
      confirm: "Reject row",
      danger: true
    }))) return
    const message = await send(action === "edit_cell"
      ? { action, rowId: id, field: field.trim(), value: typedValue(value, /^-?\d+(\.\d+)?$/.test(value.trim()) ? 0 : "") }
      : { action, rowId: id })
    if (message === undefined) {
      onNotice(action === "reject_row" ? "Row rejected" : action === "resolve_flag" ? "Row marked resolved" : `${field.trim()} of the row saved`)
      return setErrors({})
    }
    const named = fieldOfMessage(message)
    setErrors(
      named === "rowId" || /rowId|Row .* not found|not found/i.test(message) ? { rowId: message }
      : named === "field" || /^Field "/.test(message) ? { field: message }
      : named !== undefined && (named === field.trim() || named === "value") ? { value: message }
      : { form: message }
    )
  }
  const input = (id: "rowId" | "field" | "value", label: string, v: string, set: (s: string) => void) => (
    <div class="field">
      <label for={`row-action-${id}`}>{label}</label>
      <input
        id={`row-action-${id}`}
        value={v}
        onInput={(e) => set(e.currentTarget.value)}
        aria-invalid={errors[id] !== undefined ? "true" : undefined}
        aria-describedby={errors[id] !== undefined ? `row-action-${id}-error` : undefined}
      />
      {errors[id] !== undefined && <p class="error" id={`row-action-${id}-error`}>{errors[id]}</p>}
    </div>
  )
  return (
    <form class="panel" aria-label="Row action" onSubmit={(e) => e.preventDefault()}>
      <h3>Row action</h3>
      {input("rowId", "Row id", rowId, setRowId)}
      {input("field", "Field", field, setField)}
      {input("value", "New value", value, setValue)}
      <ErrorText message={errors.form} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => run("edit_cell")}>Edit cell</button>
        <button type="button" class="secondary" onClick={() => run("resolve_flag")}>Mark row resolved</button>
        <button type="button" class="secondary" onClick={() => run("reject_row")}>Reject row</button>
      </div>
      {dialog}
    </form>
  )
}
