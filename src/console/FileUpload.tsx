/**
 * A FILE_UPLOAD step: a file picker and a drop zone that take only the step's accepted types
 * (`displayHint.config.accept`: media types or `.ext`), upload progress, and the file sent
 * with the step's `submit_file` action's source and signal (as its own bytes, the raw upload),
 * which completes the step.
 */
import { useState } from "preact/hooks"
import { acceptedTypes as acceptedOf, isAccepted } from "../api/fileAccept.js"
import type { UiStep } from "../api/resources.js"
import { messageOf, uploadRaw } from "./api.js"
import { ErrorText } from "./ui.js"
import { fileTypeName, orList } from "./words.js"

interface SubmitFile {
  readonly path: string
  readonly source?: string
  readonly signalTaskId?: string
  readonly signalName?: string
}

const submitActionOf = (step: UiStep): SubmitFile | undefined => {
  const actions = Array.isArray(step.args.actions) ? step.args.actions as Array<Record<string, unknown>> : []
  const a = actions.find((x) => x?.type === "submit_file")
  return a === undefined || typeof a.path !== "string" ? undefined : a as unknown as SubmitFile
}

/** The step's accepted types; the rule itself is shared with the gateway (../api/fileAccept.ts). */
export const acceptedTypes = (step: UiStep): ReadonlyArray<string> => acceptedOf(step.displayHint.config)

export { isAccepted }

export const FileUpload = ({ taskId, step, onDone }: { taskId: string; step: UiStep; onDone: () => void }) => {
  const accepted = acceptedTypes(step)
  const action = submitActionOf(step)
  const [file, setFile] = useState<File | undefined>()
  /** The last file picked or dropped that this step does not take: Upload says so, not "choose a file". */
  const [refused, setRefused] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [progress, setProgress] = useState<number | undefined>()
  const [over, setOver] = useState(false)
  const inputId = `file-${step.id}`

  const acceptedWords = orList(accepted.map(fileTypeName))
  const refusal = (f: File) =>
    `${f.name} is not an accepted type: ${f.type !== "" ? `${fileTypeName(f.type)} files are` : "a file of unknown type is"} refused here. Choose a ${acceptedWords} file.`

  const choose = (f: File | undefined, picker?: HTMLInputElement) => {
    setError(undefined)
    if (f !== undefined && !isAccepted(f, accepted)) {
      setFile(undefined)
      // The picker lets go of the refused file, so what it shows matches what would be sent: nothing.
      if (picker !== undefined) picker.value = ""
      const message = refusal(f)
      setRefused(message)
      setError(message)
      return
    }
    setRefused(undefined)
    setFile(f)
  }

  const upload = async (event: Event) => {
    event.preventDefault()
    if (file === undefined) {
      setError(refused ?? `Choose a file first${accepted.length > 0 ? ` (${acceptedWords})` : ""}`)
      return
    }
    setError(undefined)
    setProgress(0)
    try {
      const fields = {
        source: action?.source ?? (typeof step.args.source === "string" ? step.args.source : step.id),
        fileName: file.name,
        ...(action?.signalTaskId !== undefined && action.signalName !== undefined
          ? { signalTaskId: action.signalTaskId, signalName: action.signalName }
          : {})
      }
      // The file as its own bytes, streamed by the browser from disk (no base64 copy in memory).
      await uploadRaw({ taskId, fields, contentType: file.type !== "" ? file.type : "application/octet-stream", body: file }, (f) => setProgress(f))
      setFile(undefined)
      const picker = document.getElementById(inputId)
      if (picker instanceof HTMLInputElement) picker.value = ""
      onDone()
    } catch (e) {
      setError(messageOf(e))
    } finally {
      setProgress(undefined)
    }
  }

  return (
    <form class="panel" onSubmit={upload} aria-label="File upload">
      {action === undefined && <p class="hint">This step names no submit action; the file is stored without completing it.</p>}
      <div class="field">
        <label for={inputId}>File to upload</label>
        <input
          id={inputId}
          type="file"
          accept={accepted.length > 0 ? accepted.join(",") : undefined}
          aria-describedby={`${inputId}-types`}
          aria-invalid={refused !== undefined ? "true" : undefined}
          onChange={(e) => choose(e.currentTarget.files?.[0], e.currentTarget)}
        />
        <p class="hint" id={`${inputId}-types`}>Accepted: {accepted.length > 0 ? acceptedWords : "any type"}</p>
      </div>
      <div
        class={over ? "dropzone over" : "dropzone"}
        data-testid="dropzone"
        onDragOver={(e) => {
          e.preventDefault()
          setOver(true)
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault()
          setOver(false)
          const picker = document.getElementById(inputId)
          if (picker instanceof HTMLInputElement) picker.value = ""
          choose(e.dataTransfer?.files?.[0])
        }}
      >
        {file !== undefined ? `Ready: ${file.name}` : "…or drop a file here"}
      </div>
      {progress !== undefined && (
        <div class="field">
          <label for={`${inputId}-progress`}>Upload progress</label>
          <progress id={`${inputId}-progress`} max={1} value={progress} />
        </div>
      )}
      <ErrorText message={error} />
      <div class="actions">
        <button type="submit" disabled={progress !== undefined}>Upload</button>
      </div>
    </form>
  )
}
