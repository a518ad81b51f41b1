/**
 * Runbooks decoded once per text: a task board decodes each of its workflows' runbooks, and the
 * Schema decode of one was most of the board's own work (bench/PROFILE.md, S2). Keyed by the
 * workflow and checked against the stored text on every use, so a runbook changed in the
 * database (by this process or another) is decoded again: what is cached is a function of the
 * text alone. The decoded runbooks are shared between requests: nothing changes them.
 */
import type { Workspace } from "../../upstream/model.js"
import { runbookFromJson } from "./db.js"

/** Workflows remembered per store (the least recently used goes first). */
export const RUNBOOK_CACHE_SIZE = 256

export interface RunbookCache {
  /** The runbook of `text` (null for null); throws as runbookFromJson does for a text that does not decode. */
  readonly decode: (workflowId: string, text: string | null) => Workspace.Runbook | null
}

export const makeRunbookCache = (size: number = RUNBOOK_CACHE_SIZE): RunbookCache => {
  const entries = new Map<string, { readonly text: string; readonly runbook: Workspace.Runbook }>()
  return {
    decode: (workflowId, text) => {
      if (text === null) return null
      const cached = entries.get(workflowId)
      entries.delete(workflowId)
      if (cached !== undefined && cached.text === text) {
        entries.set(workflowId, cached)
        return cached.runbook
      }
      const runbook = runbookFromJson(text)
      if (runbook === null) return null
      if (entries.size >= size) entries.delete(entries.keys().next().value!)
      entries.set(workflowId, { text, runbook })
      return runbook
    }
  }
}
