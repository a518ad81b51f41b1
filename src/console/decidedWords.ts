/**
 * What was decided at a completed step, and why a FAILED task failed, in words rather than the
 * snapshot's JSON (worded as the timeline is, ./timelineWords.ts): who decided what,
 * when, with their comment; a file submitted by name; any other recorded fact as "Label: value".
 * Pure, so tests can call it.
 */
import type { TaskEvent } from "../api/resources.js"
import type { TimelineIndex } from "../client/eventText.js"
import type { ConsoleKnown, Piece } from "./timelineWords.js"
import { agentWord, humanize, plural } from "./words.js"

/** One sentence: who (when known), what, and when (an ISO time, when known). */
export interface Sentence {
  readonly who?: string
  readonly what: ReadonlyArray<Piece>
  readonly at?: string
}

/** A snapshot as words: its sentence, and the facts it recorded besides. */
export interface SnapshotWords {
  readonly sentence: Sentence
  readonly facts: ReadonlyArray<readonly [label: string, text: string]>
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.trim() !== "" ? v : undefined)

/** Who acted, as people read it: an agent's `agent:<uuid>` as the agent (by name when the timeline names it). */
const whoOf = (actor: unknown, index: TimelineIndex | undefined): string | undefined => {
  const a = str(actor)
  if (a === undefined || !a.startsWith("agent:")) return a
  const id = a.slice("agent:".length)
  const w = agentWord(id, index?.agentName(id))
  return w[0]!.toUpperCase() + w.slice(1)
}

/** Keys the sentence itself tells. */
const TOLD = new Set(["decision", "reason", "comments", "decidedAt", "decidedBy", "via", "submittedAt", "submittedBy", "documentRef", "fileName", "filename", "files"])

const MAX_FACT = 500

/** A recorded value as text: scalars as they read, a list of scalars joined, anything else as short "key: value" text. */
const factText = (v: unknown, depth = 0): string => {
  if (v === null || v === undefined) return "none"
  if (typeof v === "boolean") return v ? "Yes" : "No"
  if (typeof v === "number") return v.toLocaleString()
  if (typeof v === "string") return v
  if (depth > 1) return "…"
  if (Array.isArray(v)) return v.length === 0 ? "none" : v.map((x) => factText(x, depth + 1)).join(", ")
  if (typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
    return entries.length === 0 ? "none" : entries.map(([k, x]) => `${humanize(k)}: ${factText(x, depth + 1)}`).join("; ")
  }
  return String(v)
}

/** The last element that matches (the console's target has no Array.prototype.findLast). */
const lastOf = <A>(list: ReadonlyArray<A>, keep: (a: A) => boolean): A | undefined => {
  for (let i = list.length - 1; i >= 0; i--) if (keep(list[i]!)) return list[i]
  return undefined
}

const clip = (s: string) => (s.length > MAX_FACT ? `${s.slice(0, MAX_FACT)}…` : s)

const remark = (s: Record<string, unknown>): ReadonlyArray<Piece> => {
  const said = str(s.reason) ?? str(s.comments)
  return said === undefined ? [", with no comment"] : [", saying ", { kind: "quote", text: said }]
}

/** A snapshot (`GET /v1/tasks/:taskId/snapshots`, one step's) as a sentence and facts. */
export const snapshotWords = (
  snapshot: unknown,
  stepId: string,
  known: ConsoleKnown,
  index?: TimelineIndex
): SnapshotWords => {
  const step: Piece = { kind: "name", text: known.stepTitle(stepId) }
  if (typeof snapshot !== "object" || snapshot === null || Array.isArray(snapshot)) {
    return { sentence: { what: [step, " was completed; nothing else was recorded"] }, facts: [] }
  }
  const s = snapshot as Record<string, unknown>
  const facts = Object.entries(s)
    .filter(([k]) => !TOLD.has(k))
    .map(([k, v]) => [humanize(k), clip(factText(v))] as const)
  if (s.decision === "approved" || s.decision === "rejected") {
    const who = whoOf(s.decidedBy, index)
    return {
      sentence: {
        ...(who !== undefined ? { who } : {}),
        what: [
          who === undefined ? "Someone not named " : "",
          s.decision, " ", step,
          ...(s.via === "link" ? [" through a decision link"] : []),
          ...remark(s)
        ],
        ...(str(s.decidedAt) !== undefined ? { at: s.decidedAt as string } : {})
      },
      facts
    }
  }
  if (str(s.submittedAt) !== undefined || str(s.documentRef) !== undefined) {
    const who = whoOf(s.submittedBy, index)
    const ref = str(s.documentRef)
    const name = str(s.fileName) ?? str(s.filename) ?? (ref !== undefined ? index?.fileName(ref) : undefined)
    const what: Piece = name !== undefined
      ? { kind: "name", text: name }
      : typeof s.files === "number" ? plural(s.files, "file") : ref !== undefined ? "a file" : "what the step asked for"
    return {
      sentence: {
        ...(who !== undefined ? { who } : {}),
        what: [who === undefined ? "Someone not named " : "", "submitted ", what, " to ", step],
        ...(str(s.submittedAt) !== undefined ? { at: s.submittedAt as string } : {})
      },
      facts
    }
  }
  return { sentence: { what: [step, " was completed"] }, facts }
}

/**
 * Why a FAILED task failed: the step whose snapshot says it was rejected, else the timeline's
 * rejection (a gateway record), else a status change that gives a reason. Undefined when
 * nothing recorded says why.
 */
export const failureOf = (
  snapshots: Readonly<Record<string, unknown>> | undefined,
  events: ReadonlyArray<TaskEvent>,
  known: ConsoleKnown,
  index?: TimelineIndex
): Sentence | undefined => {
  for (const [stepId, v] of Object.entries(snapshots ?? {})) {
    const s = v as Record<string, unknown> | null
    if (typeof s === "object" && s !== null && s.decision === "rejected") {
      const who = whoOf(s.decidedBy, index)
      return {
        ...(who !== undefined ? { who } : {}),
        what: [who === undefined ? "Someone not named " : "", "rejected ", { kind: "name", text: known.stepTitle(stepId) }, ...remark(s)],
        ...(str(s.decidedAt) !== undefined ? { at: s.decidedAt as string } : {})
      }
    }
  }
  const gateway = events.filter((e) => e.origin === "gateway")
  const rejected = lastOf(gateway, (e) => e.type === "step.completed" && e.payload.decision === "reject")
  if (rejected !== undefined) {
    const who = whoOf(rejected.payload.actor, index)
    return {
      ...(who !== undefined ? { who } : {}),
      what: [
        who === undefined ? "Someone not named " : "",
        "rejected ",
        { kind: "name", text: known.stepTitle(str(rejected.payload.stepId) ?? "a step") },
        ...remark(rejected.payload)
      ],
      at: rejected.createdAt
    }
  }
  const changed = lastOf(gateway, (e) => e.type === "task.status_changed" && e.payload.to === "FAILED")
  const reason = changed !== undefined ? str(changed.payload.reason) ?? str(changed.payload.error) : undefined
  if (changed !== undefined && reason !== undefined) {
    return { what: ["The workflow stopped it: ", { kind: "quote", text: reason }], at: changed.createdAt }
  }
  return undefined
}
