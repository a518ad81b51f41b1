/**
 * What a timeline event says, in words, for the console and `svc events`: who acted and what
 * they did, for the events the gateway and its workspace write themselves (README "The audit
 * timeline": source `audit`, and the engine's `workspace` events). Any other event (a worker's,
 * an agent's own, or a known type from another source) gets no description: callers keep their
 * generic rendering for it. An event is the gateway's only by the store's mark (`origin:
 * "gateway"`), never by how its source reads.
 *
 * The description is a list of parts rather than a string, so the console can set values,
 * names, ids and quoted comments apart (always as text), and the CLI can print them escaped on
 * one line. Pure, no Node or DOM imports: the console bundles it.
 */
import type { TaskEvent } from "../api/resources.js"

/**
 * The gateway's own record, by type, and the source that writes each (src/domain/engine.ts):
 * an event of one of these types from any other source (a worker's own `step.completed`) is
 * not the record, and is shown as any other event.
 */
export const RECORD_SOURCE: Readonly<Record<string, "audit" | "workspace">> = {
  "task.created": "audit",
  "row.rejected": "audit",
  "row.resolved": "audit",
  "row.edited": "audit",
  "file.stored": "audit",
  "data.ingested": "audit",
  "step.completed": "workspace",
  "source.submitted": "workspace",
  "task.status_changed": "workspace",
  "task.waiting": "workspace",
  "step.claimed": "audit",
  "step.released": "audit"
}

export type Part =
  | string
  /** A name: a step's title, a field, a file name, a ledger. */
  | { readonly kind: "name"; readonly text: string }
  /** An id shown short (its first 8 characters), the full id beside it. */
  | { readonly kind: "id"; readonly text: string; readonly full: string }
  /** Free text someone wrote (comments, a reason). */
  | { readonly kind: "quote"; readonly text: string }
  /** A stored value: a cell's content, a status. */
  | { readonly kind: "value"; readonly value: unknown }
  /** A change from one value to another. */
  | { readonly kind: "change"; readonly from: unknown; readonly to: unknown }

/** Who acted: a person (or whatever the edge named), an agent, nobody named, or no one (the workspace itself). */
export type Who =
  | { readonly kind: "named"; readonly text: string }
  | { readonly kind: "agent"; readonly id: string; readonly name?: string }
  | { readonly kind: "unnamed" }

export interface EventText {
  /** Absent for what the workspace does by itself (a status change, a source recorded). */
  readonly who?: Who
  readonly what: ReadonlyArray<Part>
}

/** What a reader of a timeline may know besides the events: step titles, row labels. */
export interface Known {
  readonly stepTitle?: (stepId: string) => string | undefined
  readonly rowLabel?: (rowId: string) => string | undefined
}

/**
 * What the events of a timeline tell about its other events: an agent's name (the sourceLabel
 * of its own events) and a stored document's file name (its `file.stored` event). Fed every
 * event as it arrives.
 */
export const makeTimelineIndex = () => {
  const agents = new Map<string, string>()
  const files = new Map<string, string>()
  return {
    add: (e: TaskEvent) => {
      // Only events the store marked as written by the gateway or an authenticated agent name an agent.
      if (e.origin !== "producer" && e.source.startsWith("agent:") && typeof e.sourceLabel === "string" && e.sourceLabel !== "") {
        agents.set(e.source.slice("agent:".length), e.sourceLabel)
      }
      if (isGatewayRecord(e) && e.type === "file.stored") {
        const { documentId, fileName } = e.payload
        if (typeof documentId === "string" && typeof fileName === "string") files.set(documentId, fileName)
      }
    },
    agentName: (id: string) => agents.get(id),
    fileName: (documentId: string) => files.get(documentId)
  }
}
export type TimelineIndex = ReturnType<typeof makeTimelineIndex>

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined)

/** A uuid-like id shown by its first 8 characters; anything shorter whole. */
export const shortId = (id: string) => (id.length > 12 ? id.slice(0, 8) : id)

const id = (full: string): Part => ({ kind: "id", text: shortId(full), full })

const whoOf = (actor: unknown, index: TimelineIndex | undefined): Who => {
  if (typeof actor !== "string" || actor === "") return { kind: "unnamed" }
  if (actor.startsWith("agent:")) {
    const agentId = actor.slice("agent:".length)
    const name = index?.agentName(agentId)
    return name === undefined ? { kind: "agent", id: agentId } : { kind: "agent", id: agentId, name }
  }
  return { kind: "named", text: actor }
}

const step = (stepId: unknown, known: Known): ReadonlyArray<Part> => {
  const sid = str(stepId)
  if (sid === undefined) return ["a step"]
  const title = known.stepTitle?.(sid)
  return ["step ", { kind: "name", text: title ?? sid }]
}

const row = (rowId: unknown, known: Known): ReadonlyArray<Part> => {
  const rid = str(rowId)
  if (rid === undefined) return ["a row"]
  const label = known.rowLabel?.(rid)
  return label === undefined ? ["row ", id(rid)] : ["row ", id(rid), " (", { kind: "name", text: label }, ")"]
}

/** "at step X" for a row action, "directly" for a subledger call. */
const via = (p: Record<string, unknown>, known: Known): ReadonlyArray<Part> =>
  p.via === "direct" ? [", directly in the ledger"] : str(p.stepId) !== undefined ? [" at ", ...step(p.stepId, known)] : []

const ofLedger = (ledger: unknown): ReadonlyArray<Part> => (str(ledger) !== undefined ? [" of ", { kind: "name", text: ledger as string }] : [])

/** "approved step X — “comments”": the comments, and the reason when it says something else. */
const remarks = (p: Record<string, unknown>): ReadonlyArray<Part> => {
  const said = [...new Set([str(p.comments), str(p.reason)].filter((s): s is string => s !== undefined))]
  return said.flatMap((text, i): ReadonlyArray<Part> => [i === 0 ? " — " : "; ", { kind: "quote", text }])
}

export const formatBytes = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`

const count = (n: unknown, one: string, many: string) =>
  typeof n === "number" ? `${n} ${n === 1 ? one : many}` : many

const contextParts = (context: unknown): ReadonlyArray<Part> => {
  if (typeof context !== "object" || context === null || Array.isArray(context)) return []
  const entries = Object.entries(context)
  if (entries.length === 0) return []
  return [" with ", ...entries.flatMap(([k, v], i): ReadonlyArray<Part> => [i === 0 ? "" : ", ", { kind: "name", text: k }, " ", { kind: "value", value: v }])]
}

const describeWhat = (e: TaskEvent, known: Known, index: TimelineIndex | undefined): ReadonlyArray<Part> | undefined => {
  const p = e.payload
  switch (e.type) {
    case "task.created":
      return [
        "started the task",
        ...(str(p.title) !== undefined ? [" ", { kind: "name", text: p.title as string } as Part] : []),
        ...(str(p.workflowId) !== undefined ? [" (workflow ", { kind: "name", text: p.workflowId as string } as Part, ")"] : []),
        ...contextParts(p.context)
      ]
    case "step.completed": {
      const verb = p.decision === "approve" ? "approved " : p.decision === "reject" ? "rejected " : "completed "
      return [verb, ...step(p.stepId, known), ...(p.via === "link" ? [" through a decision link"] : []), ...remarks(p)]
    }
    case "row.rejected": {
      const was = str(p.previousStatus)
      const now = str(p.newStatus)
      return [
        "rejected ",
        ...row(p.rowId, known),
        ...ofLedger(p.ledger),
        ...(was !== undefined ? [" (was ", { kind: "value", value: was } as Part, ")"] : []),
        ...(now !== undefined && now !== "REJECTED" ? [", now ", { kind: "value", value: now } as Part] : []),
        ...via(p, known)
      ]
    }
    case "row.resolved":
      return ["marked ", ...row(p.rowId, known), ...ofLedger(p.ledger), " resolved", ...via(p, known)]
    case "row.edited":
      return [
        "changed ",
        { kind: "name", text: str(p.field) ?? "a field" },
        " on ",
        ...row(p.rowId, known),
        ...ofLedger(p.ledger),
        " ",
        { kind: "change", from: p.oldValue ?? null, to: p.newValue ?? null },
        ...via(p, known)
      ]
    case "file.stored": {
      const size = typeof p.sizeBytes === "number" ? ` (${formatBytes(p.sizeBytes)})` : ""
      return [
        "uploaded ",
        str(p.fileName) !== undefined ? { kind: "name", text: p.fileName as string } : str(p.documentId) !== undefined ? id(p.documentId as string) : "a file",
        size,
        ...(str(p.source) !== undefined ? [" to ", { kind: "name", text: p.source as string } as Part] : [])
      ]
    }
    case "data.ingested":
      return [
        `ingested ${count(p.count, "record", "records")}`,
        ...(str(p.kind) !== undefined ? [" (", { kind: "name", text: p.kind as string } as Part, ")"] : [])
      ]
    case "source.submitted": {
      const ids = Array.isArray(p.documentIds) ? p.documentIds : Array.isArray(p.recordIds) ? p.recordIds : []
      const what: Array<Part> = p.kind === "file"
        ? ids.length === 1 && typeof ids[0] === "string"
          ? [index?.fileName(ids[0]) !== undefined ? { kind: "name", text: index.fileName(ids[0])! } : id(ids[0])]
          : [count(ids.length, "file", "files")]
        : [ids.length === 1 && typeof ids[0] === "string" ? "record " : count(ids.length, "record", "records"), ...(ids.length === 1 && typeof ids[0] === "string" ? [id(ids[0])] : [])]
      const kind = str(p.recordKind)
      return ["Submitted ", ...what, ...(kind !== undefined ? [" (", { kind: "name", text: kind } as Part, ")"] : []), " to ", ...step(p.stepId, known)]
    }
    case "task.status_changed":
      return ["Task status changed ", { kind: "change", from: p.from ?? null, to: p.to ?? null }]
    case "task.waiting": {
      // "Waiting for ann@…, group:x at step X, due <time>"; an agent's step names the agent.
      const people = Array.isArray(p.assignees) ? p.assignees.filter((a): a is string => typeof a === "string") : []
      const agentId = str(p.agentId)
      const agent = agentId === undefined ? [] : [`Agent ${index?.agentName(agentId) ?? shortId(agentId)}`]
      const whom = [...people, ...agent]
      const due = str(p.dueAt)
      return [
        whom.length === 0 ? "Waiting at " : `Waiting for ${whom.join(", ")} at `,
        ...step(p.stepId ?? undefined, { ...known, stepTitle: (sid) => known.stepTitle?.(sid) ?? str(p.title) }),
        ...(due !== undefined ? [", due ", { kind: "value", value: due } as Part] : [])
      ]
    }
    case "step.claimed":
      return [p.override === true ? "took over " : "claimed ", ...step(p.stepId, known)]
    case "step.released":
      return ["released ", ...step(p.stepId, known)]
    default:
      return undefined
  }
}

/**
 * Whether `e` is the gateway's own record: marked so by the store (`origin`, which no client can
 * set) and of a type the gateway writes from that source. How its `source` reads proves nothing.
 */
export const isGatewayRecord = (e: TaskEvent): boolean =>
  e.origin === "gateway" && Object.hasOwn(RECORD_SOURCE, e.type) && RECORD_SOURCE[e.type] === e.source

/** Events written by the workspace on its own: no actor in their payload. */
const UNATTRIBUTED = new Set(["source.submitted", "task.status_changed", "task.waiting"])

/**
 * The words for `e`, or undefined when it is not one of the gateway's own known events (the
 * caller renders it as before).
 */
export const describeEvent = (e: TaskEvent, known: Known = {}, index?: TimelineIndex): EventText | undefined => {
  if (!isGatewayRecord(e)) return undefined
  const what = describeWhat(e, known, index)
  if (what === undefined) return undefined
  return UNATTRIBUTED.has(e.type) ? { what } : { who: whoOf(e.payload.actor, index), what }
}

/** Who, as words: the name the edge gave, "Agent <name or short id>", or "Someone" when nobody was named. */
export const whoText = (who: Who): string =>
  who.kind === "named"
    ? who.text
    : who.kind === "agent"
    ? who.name !== undefined ? `Agent ${who.name} (${shortId(who.id)})` : `Agent ${shortId(who.id)}`
    : "Someone"
