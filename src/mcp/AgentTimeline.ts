/**
 * What agents write to a task's event timeline: their own events (append_event without a seq
 * takes the next free one) and one `agent.action` event per write a tool makes, so every
 * change an agent causes is attributed to it (`source: agent:<uuid>`, its name as sourceLabel).
 *
 * "Next free seq": per task (the exact task id: each composite child id is its own stream),
 * appends are serialized in this process and the last seq used is remembered; the workspace's
 * (taskId, seq) uniqueness settles races with other writers: a seq taken meanwhile is a
 * Conflict, after which the timeline is read again and the next one tried.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Semaphore from "effect/Semaphore"
import { randomUUID } from "node:crypto"
import type { TaskEventDto } from "../api/dtos.js"
import { DEFAULT_EVENT_PAGE_BYTES, EVENT_PAGE_MAX } from "../api/eventPaging.js"
import { type BadRequest, Conflict, type NotFound, type UpstreamError } from "../api/errors.js"
import type { TaskEvent } from "../api/resources.js"
import { appendTaskEvent, eventPageBytesSetting, readTimelinePage } from "../services/taskEvents.js"
import type { Tenant } from "../services/Tenant.js"
import { withIdempotencyKey, type WorkspaceClient } from "../upstream/WorkspaceClient.js"
import type { Agent } from "../upstream/registry.js"

/** The event source naming an agent: `agent:<registry uuid>` (42 characters, under the 64 allowed). */
export const agentSource = (agent: Pick<Agent, "id">) => `agent:${agent.id}`

/** The agent's name as an event's sourceLabel (at most 256 characters). */
export const agentLabel = (agent: Pick<Agent, "name">) => agent.name.slice(0, 256)

/** The event type of the record each agent write leaves in the timeline. */
export const AGENT_ACTION_EVENT = "agent.action"

const ATTEMPTS = 5
const REMEMBERED_TASKS = 10_000

/**
 * One workspace write under an idempotency key of its own: a tool may make several writes in
 * one HTTP request, which must not share the request's key (src/gateway/requestScope.ts).
 */
export const ownWrite = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => withIdempotencyKey(randomUUID())(self))

export interface AgentTimelineService {
  /** Appends `event` at the task's next free seq. */
  readonly appendNext: (
    taskId: string,
    event: Omit<TaskEventDto, "seq">
  ) => Effect.Effect<TaskEvent, NotFound | Conflict | BadRequest | UpstreamError, Tenant | WorkspaceClient>
  /**
   * Records that `agent` made a write with `tool` on the task. Never fails the tool: the write
   * is done; a failure to record it is logged (without the details' values).
   */
  readonly recordAction: (
    agent: Agent,
    taskId: string,
    tool: string,
    details: Record<string, unknown>
  ) => Effect.Effect<void, never, Tenant | WorkspaceClient>
}

export class AgentTimeline extends Context.Service<AgentTimeline, AgentTimelineService>()("mcp/AgentTimeline") {
  static readonly layer = Layer.sync(AgentTimeline, () => makeAgentTimeline())
}

export const makeAgentTimeline = (): AgentTimelineService => {
  const locks = new Map<string, { readonly lock: Semaphore.Semaphore; users: number }>()
  const nextSeq = new Map<string, number>()

  const serialized = <A, E, R>(taskId: string, self: Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const held = locks.get(taskId) ?? { lock: Semaphore.makeUnsafe(1), users: 0 }
        held.users++
        locks.set(taskId, held)
        return held
      }),
      (held) => held.lock.withPermits(1)(self),
      (held) =>
        Effect.sync(() => {
          if (--held.users === 0) locks.delete(taskId)
        })
    )

  const remember = (taskId: string, seq: number) => {
    nextSeq.delete(taskId)
    nextSeq.set(taskId, seq)
    if (nextSeq.size > REMEMBERED_TASKS) nextSeq.delete(nextSeq.keys().next().value!)
  }

  /** The highest seq of the task's timeline, reading only the events after `from` (-1: all), page by page. */
  const lastSeqAfter = (taskId: string, from: number) =>
    Effect.gen(function*() {
      const pageBytes = yield* Effect.orElseSucceed(eventPageBytesSetting, () => DEFAULT_EVENT_PAGE_BYTES)
      let last = from
      for (;;) {
        // Byte-bounded pages: a timeline of large events is never held whole.
        const page = yield* readTimelinePage(taskId, { afterSeq: last >= 0 ? last : undefined, limit: EVENT_PAGE_MAX }, pageBytes)
        if (page.events.length > 0) last = Math.max(last, page.events[page.events.length - 1]!.seq)
        if (page.nextAfterSeq === undefined) return last
      }
    })

  const appendNext: AgentTimelineService["appendNext"] = (taskId, event) =>
    serialized(
      taskId,
      Effect.gen(function*() {
        let seq = nextSeq.get(taskId)
        // Where to read from when the next seq is not known: the start once, then after a conflict
        // only past the seq found taken (afterSeq paging: what is new, not the whole timeline).
        let readFrom = -1
        for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
          if (seq === undefined) seq = (yield* lastSeqAfter(taskId, readFrom)) + 1
          const appended = yield* Effect.result(ownWrite(appendTaskEvent(taskId, { ...event, seq })))
          if (Result.isSuccess(appended)) {
            remember(taskId, appended.success.seq + 1)
            return appended.success
          }
          if (appended.failure._tag !== "Conflict") return yield* Effect.fail(appended.failure)
          nextSeq.delete(taskId)
          readFrom = seq - 1
          seq = undefined
        }
        return yield* Effect.fail(
          new Conflict({ message: `No free seq found for task ${taskId} after ${ATTEMPTS} attempts; retry, or pass seq` })
        )
      })
    )

  const recordAction: AgentTimelineService["recordAction"] = (agent, taskId, tool, details) =>
    appendNext(taskId, {
      type: AGENT_ACTION_EVENT,
      source: agentSource(agent),
      sourceLabel: agentLabel(agent),
      payload: { tool, agentId: agent.id, ...details }
    }).pipe(
      Effect.asVoid,
      Effect.catch((e) =>
        Effect.logWarning(`mcp: could not record ${tool} by agent ${agent.id} on task ${taskId}: ${e.message}`)
      )
    )

  return { appendNext, recordAction }
}
