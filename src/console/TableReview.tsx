/**
 * A TABLE_REVIEW step: its rows (`args.rows`: id, status, fields, which fields are editable)
 * in a table with inline cell edits and row rejects through `/row-action`, each error shown at
 * the cell or row it is about. A step whose args carry no rows gets its config and args shown
 * and a row-action form taking the row id. Approve / Reject decide the step itself.
 */
import { useState } from "preact/hooks"
import type { UiStep } from "../api/resources.js"
import { fieldOfMessage, gw, messageOf } from "./api.js"
import { Decision } from "./Decision.js"
import { ErrorText, Json } from "./ui.js"

type Scalar = string | number | boolean | null

export interface ReviewRow {
  readonly id: string
  readonly status: string
  readonly fields: Readonly<Record<string, Scalar>>
  readonly editable: ReadonlyArray<string>
}

const rowsOf = (step: UiStep): ReadonlyArray<ReviewRow> | undefined => {
  const rows = step.args.rows
  if (!Array.isArray(rows)) return undefined
  return rows.filter((r): r is ReviewRow =>
    typeof r === "object" && r !== null && typeof r.id === "string" && typeof r.fields === "object" && r.fields !== null)
    .map((r) => ({ ...r, status: String(r.status ?? ""), editable: Array.isArray(r.editable) ? r.editable : [] }))
}

/** The value to send for what was typed, shaped like the value it replaces. */
export const typedValue = (text: string, previous: Scalar): Scalar => {
  if (text.trim() === "") return null
  if (typeof previous === "number") {
    const n = Number(text)
    return Number.isFinite(n) ? n : text
  }
  if (typeof previous === "boolean") return text === "true" ? true : text === "false" ? false : text
  return text
}

const show = (v: Scalar | undefined) => (v === null || v === undefined ? "" : String(v))

type Send = (body: { action: "edit_cell" | "reject_row"; rowId: string; field?: string; value?: Scalar }) => Promise<string | undefined>

export const TableReview = ({ taskId, step, onDone }: { taskId: string; step: UiStep; onDone: () => void }) => {
  const ledger = typeof step.displayHint.config.ledger === "string" ? step.displayHint.config.ledger : "expenses"
  const [notice, setNotice] = useState("")
  const send: Send = async (body) => {
    try {
      await gw.tasks.rowAction({
        path: { taskId },
        payload: { ledger: ledger as "expenses", step: step.id, ...body }
      })
      setNotice(body.action === "reject_row" ? `Row ${body.rowId} rejected` : `${body.field} of row ${body.rowId} saved`)
      onDone()
      return undefined
    } catch (e) {
      return messageOf(e)
    }
  }
  const rows = rowsOf(step)
  return (
    <div>
      {rows !== undefined ? <RowsTable rows={rows} send={send} /> : (
        <>
          <Json label="Step configuration" value={step.displayHint.config} />
          <Json label="Step arguments" value={step.args} />
          <RowActionForm send={send} />
        </>
      )}
      <p class="ok" role="status">{notice}</p>
      <Decision taskId={taskId} stepId={step.id} onDone={onDone} />
    </div>
  )
}

const RowsTable = ({ rows, send }: { rows: ReadonlyArray<ReviewRow>; send: Send }) => {
  const columns = [...new Set(rows.flatMap((r) => Object.keys(r.fields)))]
  const [errors, setErrors] = useState<Record<string, string>>({})
  const setError = (key: string, message: string | undefined) =>
    setErrors((e) => {
      const next = { ...e }
      if (message === undefined) delete next[key]
      else next[key] = message
      return next
    })
  if (rows.length === 0) return <p>This step has no rows to review.</p>
  return (
    <div class="panel scroll">
      <table aria-label="Rows to review">
        <thead>
          <tr>
            <th scope="col">Row</th><th scope="col">Status</th>
            {columns.map((c) => <th scope="col" key={c}>{c}</th>)}
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => {
            const rowKey = `${row.id}:reject`
            return (
              <tr key={row.id} data-row-id={row.id}>
                <th scope="row" class="mono">{i + 1}</th>
                <td>{row.status}</td>
                {columns.map((field) => {
                  const value = row.fields[field]
                  const cellKey = `${row.id}:${field}`
                  if (!row.editable.includes(field)) return <td key={field}>{show(value)}</td>
                  const errorId = `err-${row.id}-${field}`
                  return (
                    <td key={field}>
                      <input
                        key={`${cellKey}:${show(value)}`}
                        aria-label={`${field}, row ${i + 1}`}
                        defaultValue={show(value)}
                        aria-invalid={errors[cellKey] !== undefined ? "true" : undefined}
                        aria-describedby={errors[cellKey] !== undefined ? errorId : undefined}
                        onChange={async (e) => {
                          const text = e.currentTarget.value
                          if (text === show(value)) return
                          setError(cellKey, await send({ action: "edit_cell", rowId: row.id, field, value: typedValue(text, value ?? null) }))
                        }}
                      />
                      {errors[cellKey] !== undefined && <p class="error" id={errorId}>{errors[cellKey]}</p>}
                    </td>
                  )
                })}
                <td>
                  <button
                    type="button"
                    class="secondary"
                    disabled={row.status === "REJECTED"}
                    onClick={async () => setError(rowKey, await send({ action: "reject_row", rowId: row.id }))}
                  >
                    Reject row {i + 1}
                  </button>
                  {errors[rowKey] !== undefined && <p class="error">{errors[rowKey]}</p>}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
    </div>
  )
}

/** Without rows in the step's args: act on a row by its id. */
const RowActionForm = ({ send }: { send: Send }) => {
  const [rowId, setRowId] = useState("")
  const [field, setField] = useState("")
  const [value, setValue] = useState("")
  const [errors, setErrors] = useState<{ rowId?: string; field?: string; value?: string; form?: string }>({})
  const run = async (action: "edit_cell" | "reject_row") => {
    const message = await send(action === "edit_cell"
      ? { action, rowId: rowId.trim(), field: field.trim(), value: typedValue(value, /^-?\d+(\.\d+)?$/.test(value.trim()) ? 0 : "") }
      : { action, rowId: rowId.trim() })
    if (message === undefined) return setErrors({})
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
        <button type="button" class="secondary" onClick={() => run("reject_row")}>Reject row</button>
      </div>
    </form>
  )
}
