/** data ingest: a JSON or NDJSON file of records, sent as one bulk batch. */
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { readFile } from "node:fs/promises"
import { DataIngestDto } from "../../api/dtos.js"
import { inexactNumberProblem } from "../../api/jsonNumbers.js"
import { isJsonObject } from "../../api/jsonObject.js"
import { parseJson } from "../../api/jsonParse.js"
import { firstWhere } from "../../api/jsonValue.js"
import { booleanFlag, checkPayload, fileArg, gatewayCommand, group, line, table, taskIdArg, unreadable, usage } from "../common.js"


/**
 * The records of a file: a JSON array of objects, one JSON object, or NDJSON (one object per
 * line; blank lines skipped). `.ndjson` / `.jsonl` files are read as NDJSON only. A number the
 * parse would change (an integer past 2^53, src/api/jsonNumbers.ts) is refused here, naming
 * where it is: parsed, it would be sent, and stored, as another number with no word said. Keys
 * written with an escape are read as written (../../api/jsonParse.ts: a line after one with a
 * backslash key had its `"\""` read as `\`).
 */
export const parseRecords = (name: string, text: string): { ok: true; records: Array<unknown> } | { ok: false; message: string } => {
  const ndjsonOnly = /\.(nd)?jsonl?$/i.test(name) && !/\.json$/i.test(name)
  if (!ndjsonOnly) {
    try {
      const doc = parseJson(text)
      const problem = inexactNumberProblem(text, firstWhere)
      if (problem !== undefined) return { ok: false, message: `${name}: ${problem}` }
      return { ok: true, records: Array.isArray(doc) ? doc : [doc] }
    } catch {
      // not one JSON document: try NDJSON
    }
  }
  const records: Array<unknown> = []
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!.trim()
    if (l === "") continue
    try {
      records.push(parseJson(l))
    } catch (e) {
      return { ok: false, message: `${name}:${i + 1}: not JSON (${(e as Error).message})` }
    }
    const problem = inexactNumberProblem(l, firstWhere)
    if (problem !== undefined) return { ok: false, message: `${name}:${i + 1}: ${problem}` }
  }
  return { ok: true, records }
}

const ingest = gatewayCommand(
  "ingest",
  "Send the records of a JSON (array or object) or NDJSON file as one bulk batch; each record is an event's data",
  {
    taskId: taskIdArg,
    file: fileArg("file"),
    kind: Flag.String("kind").pipe(Flag.optional, Flag.withDescription("Discriminator for the batch, e.g. expense")),
    envelopes: booleanFlag("envelopes").pipe(
      Flag.withDescription("Each record is already an event {data, sourceRef?} instead of the data itself")
    ),
    signalTaskId: Flag.String("signal-task-id").pipe(Flag.optional, Flag.withDescription("Workflow to signal per record")),
    signalName: Flag.String("signal-name").pipe(Flag.optional, Flag.withDescription("Signal to send per record"))
  },
  (args, ctx) =>
    Effect.gen(function*() {
      const text = yield* Effect.tryPromise({
        try: () => readFile(args.file, "utf8"),
        catch: (e) => unreadable("<file>", args.file, e)
      })
      const parsed = parseRecords(args.file, text)
      if (!parsed.ok) return yield* usage(parsed.message)
      if (parsed.records.length === 0) return yield* usage(`${args.file}: no records`)
      const bad = parsed.records.findIndex((r) => !isJsonObject(r) || (args.envelopes && !isJsonObject(r.data)))
      if (bad !== -1) {
        return yield* usage(
          `${args.file}: record ${bad + 1} is not ${args.envelopes ? "an event object with a data object" : "a JSON object"}`
        )
      }
      const events = args.envelopes ? parsed.records : parsed.records.map((data) => ({ data }))
      const body: Record<string, unknown> = { events }
      if (Option.isSome(args.kind)) body.kind = args.kind.value
      if (Option.isSome(args.signalTaskId)) body.signalTaskId = args.signalTaskId.value
      if (Option.isSome(args.signalName)) body.signalName = args.signalName.value
      const payload = yield* checkPayload(DataIngestDto, body, "data ingest")
      const result = yield* ctx.gateway.data.ingestData({ path: { taskId: args.taskId }, payload })
      const rows = Array.isArray(result) ? result : [result]
      yield* ctx.output(result, () =>
        Effect.andThen(
          line(`Ingested ${rows.length} record(s) into task ${args.taskId}`),
          table([
            ["ID", (r) => r.id],
            ["STATUS", (r) => r.status],
            ["SIGNALED", (r) => (r.signaled ? "yes" : "no")]
          ], rows)
        ))
    })
)

export const data = group("data", "Structured records for a task", [ingest])
