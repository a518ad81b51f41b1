/** The task's files, each with a download link (the gateway's download path as the list names it). */
import { gw, underBase } from "./api.js"
import { usePoll } from "./poll.js"
import { ErrorText, Time } from "./ui.js"
import { fileTypeName } from "./words.js"

export const Files = ({ taskId, version }: { taskId: string; version: number }) => {
  const files = usePoll(() => gw.files.listFiles({ path: { taskId }, urlParams: {} }), 5000, [taskId, version])
  return (
    <section aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <ErrorText message={files.error} />
      {files.data !== undefined && files.data.length === 0 && <p>No files yet.</p>}
      {files.data !== undefined && files.data.length > 0 && (
        <ul>
          {files.data.map((f) => (
            <li key={f.id}>
              <a href={underBase(f.downloadUrl)} download={f.filename}>Download {f.filename}</a>{" "}
              <span class="hint">{fileTypeName(f.contentType)} · <Time iso={f.uploadedAt} /></span>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
