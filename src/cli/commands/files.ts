/** files list / upload / ingest / download. */
import * as Argument from "effect/cli/Argument"
import * as Flag from "effect/cli/Flag"
import * as FileSystem from "effect/FileSystem"
import * as Effect from "effect/Effect"
import * as HttpClient from "effect/http/HttpClient"
import * as Option from "effect/Option"
import type * as PlatformError from "effect/PlatformError"
import * as Stream from "effect/Stream"
import { readFile } from "node:fs/promises"
import * as path from "node:path"
import { IngestFileDto, RawUploadQuery } from "../../api/dtos.js"
import { isMediaType } from "../../api/headerValues.js"
import type { UploadResult } from "../../api/resources.js"
import { downloadFile } from "../../client/download.js"
import { makeGatewayClient } from "../../client/index.js"
import { uploadFileRaw } from "../../client/uploadRaw.js"
import {
  booleanFlag,
  checkPayload,
  choiceArg,
  choiceFlag,
  CliFailure,
  type Ctx,
  documentRefArg,
  fileArg,
  fields,
  formatBytes,
  gatewayCommand,
  group,
  line,
  printJson,
  table,
  taskIdArg,
  usage,
  unreadable
} from "../common.js"
import { makeBar, type ProgressMode, wantsProgress, withUploadProgress } from "../progress.js"

const list = gatewayCommand("list", "List a task's files (up to 20, newest first)", {
  taskId: taskIdArg,
  source: Flag.String("source").pipe(Flag.optional, Flag.withDescription("Only files of this source"))
}, ({ source, taskId }, ctx) =>
  Effect.flatMap(
    ctx.gateway.files.listFiles({
      path: { taskId },
      urlParams: Option.match(source, { onNone: () => ({}), onSome: (s) => ({ source: s }) })
    }),
    (docs) =>
      ctx.output(docs, (rows) =>
        table([
          ["ID", (d) => d.id],
          ["UPLOADED", (d) => d.uploadedAt],
          ["CONTENT TYPE", (d) => d.contentType],
          ["FILENAME", (d) => d.filename]
        ], rows))
  ))

// ---------------------------------------------------------------------------------------------
// Metadata shared by upload and ingest

const meta = {
  source: Flag.String("source").pipe(
    Flag.optional,
    Flag.withDescription("Source identifier the workflow queries by (with --submit: default the step's)")
  ),
  fileName: Flag.String("file-name").pipe(Flag.optional, Flag.withDescription("File name to store")),
  contentType: Flag.String("content-type").pipe(Flag.optional, Flag.withDescription("MIME type (default: guessed)")),
  period: Flag.String("period").pipe(Flag.optional, Flag.withDescription("Accounting period, YYYY-MM")),
  schemaSlug: Flag.String("schema-slug").pipe(Flag.optional, Flag.withDescription("Extraction schema slug")),
  signalTaskId: Flag.String("signal-task-id").pipe(Flag.optional, Flag.withDescription("Workflow to signal after the file is stored")),
  signalName: Flag.String("signal-name").pipe(Flag.optional, Flag.withDescription("Signal to send after the file is stored")),
  submit: booleanFlag("submit").pipe(
    Flag.withDescription("Submit to the task's current FILE_UPLOAD step: source and signal from its submit_file action")
  )
}

type Meta = {
  readonly source: Option.Option<string>
  readonly fileName: Option.Option<string>
  readonly contentType: Option.Option<string>
  readonly period: Option.Option<string>
  readonly schemaSlug: Option.Option<string>
  readonly signalTaskId: Option.Option<string>
  readonly signalName: Option.Option<string>
  readonly submit: boolean
}

/** The current step's submit_file action: where a file for it goes and which signal completes it. */
const submitAction = (ctx: Ctx, taskId: string) =>
  Effect.gen(function*() {
    const ui = yield* ctx.gateway.tasks.getUi({ path: { taskId } })
    const actions = ui.step !== null && Array.isArray(ui.step.args.actions) ? ui.step.args.actions : []
    const action = actions.find((a: any) => a?.type === "submit_file") as Record<string, unknown> | undefined
    if (action === undefined) {
      const where = ui.step === null ? "it has no current step" : `its current step is ${ui.step.id} (${ui.step.displayHint.component})`
      return yield* usage(`--submit: task ${taskId} is ${ui.task.status} and not waiting for a file: ${where}`)
    }
    return {
      source: typeof action.source === "string" ? action.source : undefined,
      signalTaskId: typeof action.signalTaskId === "string" ? action.signalTaskId : undefined,
      signalName: typeof action.signalName === "string" ? action.signalName : undefined
    }
  })

const metaFields = (ctx: Ctx, taskId: string, m: Meta, defaultFileName: string | undefined) =>
  Effect.gen(function*() {
    const fromStep: { readonly source?: string | undefined; readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined } =
      m.submit ? yield* submitAction(ctx, taskId) : {}
    const pick = (flag: Option.Option<string>, fallback: string | undefined) => Option.getOrElse(flag, () => fallback)
    const out: Record<string, string> = {}
    const set = (k: string, v: string | undefined) => {
      if (v !== undefined) out[k] = v
    }
    set("source", pick(m.source, fromStep.source))
    set("fileName", pick(m.fileName, defaultFileName))
    set("contentType", Option.getOrUndefined(m.contentType))
    set("period", Option.getOrUndefined(m.period))
    set("schemaSlug", Option.getOrUndefined(m.schemaSlug))
    set("signalTaskId", pick(m.signalTaskId, fromStep.signalTaskId))
    set("signalName", pick(m.signalName, fromStep.signalName))
    if (out.source === undefined) {
      return yield* usage("--source is required (or --submit, to take it from the task's current step)")
    }
    return out
  })

const readLocal = (file: string, what: string) =>
  Effect.tryPromise({ try: () => readFile(file), catch: (e) => unreadable(what, file, e) })

const renderUpload = (r: UploadResult) =>
  fields([
    ["Stored", `${r.filename} (${formatBytes(r.sizeBytes)}, ${r.contentType})`],
    ["Document", r.documentRef],
    ["Source", r.source],
    ["Signaled", r.signaled ? "yes" : "no"],
    ["Download", r.downloadUrl]
  ])

const progress = choiceFlag("progress", ["auto", "always", "never"] as const).pipe(
  Flag.withDefault("auto" as ProgressMode),
  Flag.withDescription("Progress bar on stderr: auto (large files on a terminal), always, never")
)

/** The gateway client, with a progress bar on its request bodies when wanted. */
const clientWithProgress = (ctx: Ctx, mode: ProgressMode, label: string, bytes: number) =>
  Effect.gen(function*() {
    if (!wantsProgress(mode, bytes)) return { client: ctx.gateway, end: () => {} }
    const bar = makeBar(label, bytes)
    const client = yield* makeGatewayClient(ctx.baseUrl, { transformClient: withUploadProgress(bar.update) })
    return { client, end: bar.end }
  })

const upload = gatewayCommand(
  "upload",
  "Upload a local file to a task (sent as its own bytes); --submit completes the current FILE_UPLOAD step",
  { taskId: taskIdArg, file: fileArg("path"), ...meta, progress },
  (args, ctx) =>
    Effect.gen(function*() {
      const bytes = yield* readLocal(args.file, "<path>")
      const { contentType, ...m } = yield* metaFields(ctx, args.taskId, args, path.basename(args.file))
      const fields = yield* checkPayload(RawUploadQuery, m, "files upload")
      if (contentType !== undefined && !isMediaType(contentType)) {
        return yield* usage(`--content-type: "${contentType}" is not a media type (type/subtype)`)
      }
      const request = { taskId: args.taskId, fields, contentType: contentType ?? "application/octet-stream", body: bytes }
      const upload = wantsProgress(args.progress, bytes.length)
        ? Effect.suspend(() => {
          const bar = makeBar(`uploading ${path.basename(args.file)}`, bytes.length)
          return uploadFileRaw(ctx.baseUrl, request).pipe(
            Effect.provideServiceEffect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, withUploadProgress(bar.update))),
            Effect.ensuring(Effect.sync(bar.end))
          )
        })
        : uploadFileRaw(ctx.baseUrl, request)
      yield* ctx.output(yield* upload, renderUpload)
    })
)

const ingest = gatewayCommand(
  "ingest",
  "Have the gateway fetch a file: url <https://...>, local <path on the gateway host>, inline <local file sent as base64>",
  {
    taskId: taskIdArg,
    provider: choiceArg("provider", ["url", "local", "inline"]),
    ref: Argument.String("ref").pipe(Argument.withDescription("The URL, the gateway-side path, or the local file to inline")),
    header: Flag.String("header").pipe(
      Flag.withAlias("H"),
      Flag.atLeast(0),
      Flag.withDescription("Request header for the url provider, \"Name: value\"; repeat for more")
    ),
    ...meta,
    progress
  },
  (args, ctx) =>
    Effect.gen(function*() {
      if (args.header.length > 0 && args.provider !== "url") return yield* usage("--header applies to the url provider only")
      let fileRef: Record<string, unknown>
      let defaultName: string | undefined
      let size = 0
      switch (args.provider) {
        case "url": {
          const headers: Record<string, string> = {}
          for (const h of args.header) {
            const i = h.indexOf(":")
            if (i <= 0) return yield* usage(`--header "${h}": expected "Name: value"`)
            headers[h.slice(0, i).trim()] = h.slice(i + 1).trim()
          }
          try {
            new URL(args.ref)
          } catch {
            return yield* usage(`url: "${args.ref}" is not a URL`)
          }
          fileRef = { provider: "url", url: args.ref, ...(args.header.length > 0 ? { headers } : {}) }
          break
        }
        case "local":
          // The path is read by the gateway on its own host; a relative one is taken from here.
          fileRef = { provider: "local", path: path.resolve(args.ref) }
          break
        case "inline": {
          const bytes = yield* readLocal(args.ref, "<ref>")
          size = bytes.length
          defaultName = path.basename(args.ref)
          fileRef = { provider: "inline_base64", data: bytes.toString("base64") }
          break
        }
      }
      const m = yield* metaFields(ctx, args.taskId, args, defaultName)
      const payload = yield* checkPayload(IngestFileDto, { ...m, fileRef }, "files ingest")
      const label = `sending ${defaultName ?? "file"}`
      const { client, end } = yield* clientWithProgress(ctx, args.provider === "inline" ? args.progress : "never", label, size)
      const result = yield* client.files.ingestFile({ path: { taskId: args.taskId }, payload }).pipe(
        Effect.ensuring(Effect.sync(end))
      )
      yield* ctx.output(result, renderUpload)
    })
)

// ---------------------------------------------------------------------------------------------
// Download

/** The file name of a Content-Disposition header (RFC 6266: filename* first), made safe as a local name. */
export const filenameOf = (disposition: string | undefined): string | undefined => {
  if (disposition === undefined) return undefined
  let name: string | undefined
  const star = /filename\*\s*=\s*([^']*)'[^']*'([^;]+)/i.exec(disposition)
  if (star !== null) {
    try {
      name = decodeURIComponent(star[2]!.trim())
    } catch {
      name = undefined
    }
  }
  if (name === undefined) {
    const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))/i.exec(disposition)
    if (plain !== null) name = (plain[1]?.replace(/\\(.)/g, "$1") ?? plain[2]!).trim()
  }
  if (name === undefined) return undefined
  // eslint-disable-next-line no-control-regex
  const safe = path.basename(name.replace(/\\/g, "/")).replace(/[\u0000-\u001f\u007f]/g, "").trim()
  return safe === "" || safe === "." || safe === ".." ? undefined : fitName(safe)
}

/** What file systems take for one name: 255 bytes (ext4, XFS, APFS; NTFS counts 255 UTF-16 units). */
const NAME_MAX_BYTES = 255

/**
 * `name` cut to NAME_MAX_BYTES of UTF-8 by whole characters, its extension kept: a stored name is up
 * to 255 characters, and 255 emoji are 1,020 bytes (the write failed with ENAMETOOLONG).
 */
export const fitName = (name: string, maxBytes: number = NAME_MAX_BYTES): string => {
  if (Buffer.byteLength(name) <= maxBytes) return name
  const dot = name.lastIndexOf(".")
  const ext = dot > 0 && Buffer.byteLength(name.slice(dot)) <= 32 ? name.slice(dot) : ""
  let stem = ""
  let room = maxBytes - Buffer.byteLength(ext)
  for (const c of name.slice(0, name.length - ext.length)) {
    room -= Buffer.byteLength(c)
    if (room < 0) break
    stem += c
  }
  return stem + ext
}

/** A file system failure with Node's own words (`ENOENT: no such file or directory, open '...'`) after Effect's. */
const platformMessage = (e: PlatformError.PlatformError) => {
  const cause = e.reason.cause
  return e.reason.description === undefined && cause instanceof Error ? `${e.message}: ${cause.message}` : e.message
}

const download = gatewayCommand(
  "download",
  "Download a task file, streaming it to a file (default: its stored name, in the current directory) or - for stdout",
  {
    taskId: taskIdArg,
    documentRef: documentRefArg,
    output: Flag.String("output").pipe(Flag.withAlias("o"), Flag.optional, Flag.withDescription("Where to write; - for stdout")),
    force: booleanFlag("force").pipe(Flag.withAlias("f"), Flag.withDescription("Overwrite an existing file"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const response = yield* downloadFile(ctx.baseUrl, { taskId: args.taskId, documentRef: args.documentRef })
      const contentType = response.headers["content-type"] ?? "application/octet-stream"
      const stored = filenameOf(response.headers["content-disposition"])
      const target = Option.getOrElse(args.output, () => stored ?? args.documentRef)
      let bytes = 0
      const counted = response.stream.pipe(Stream.tap((chunk) => Effect.sync(() => void (bytes += chunk.length))))
      if (target === "-") {
        yield* Stream.runForEach(counted, (chunk) =>
          Effect.callback<void>((resume) => {
            process.stdout.write(chunk, () => resume(Effect.void))
          }))
        return
      }
      if (!args.force && (yield* fs.exists(target).pipe(Effect.orElseSucceed(() => false)))) {
        return yield* usage(`${target} exists; pass --force to overwrite it, or --output another path`)
      }
      // Streamed into a temporary file beside the target, renamed once complete; its name is short
      // whatever the target's (`<255-byte name>.part-<pid>` was too long for the file system).
      const partial = path.join(path.dirname(target), `.svc-download-${process.pid}-${Date.now().toString(36)}.part`)
      yield* Stream.run(counted, fs.sink(partial)).pipe(
        Effect.andThen(fs.rename(partial, target)),
        Effect.tapError(() => fs.remove(partial).pipe(Effect.ignore)),
        Effect.mapError((e) =>
          e._tag === "PlatformError" ? new CliFailure({ message: `cannot write ${target}: ${platformMessage(e)}` }) : e
        )
      )
      const saved = { path: path.resolve(target), bytes, contentType, filename: stored ?? null }
      if (ctx.json) yield* printJson(saved)
      else yield* line(`Saved ${target} (${formatBytes(bytes)}, ${contentType})`)
    })
)

export const files = group("files", "A task's files: list, upload, ingest by reference, download", [list, upload, ingest, download])


