/**
 * What agents write to a task's event timeline: their own events (origin `agent`: the source
 * `agent:<uuid>` is the agent the tool server authenticated; append_event without a seq takes
 * the next of that source, which only the agent writes), and one `agent.action` record per write
 * a tool makes (origin `gateway`: the gateway's own record), so every change an agent causes is
 * attributed to it. Neither takes another producer's seq, so neither can be refused for one.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { randomUUID } from "node:crypto"
import type { TaskEventDto } from "../api/dtos.js"
import type { BadRequest, Conflict, NotFound, UpstreamError } from "../api/errors.js"
import type { TaskEvent } from "../api/resources.js"
import { recordTaskEvent } from "../services/taskEvents.js"
import type { Tenant } from "../services/Tenant.js"
import { withIdempotencyKey, type WorkspaceClient } from "../upstream/WorkspaceClient.js"
import type { Agent } from "../upstream/registry.js"

/** The event source naming an agent: `agent:<registry uuid>` (42 characters, under the 64 allowed). */
export const agentSource = (agent: Pick<Agent, "id">) => `agent:${agent.id}`

/** The agent's name as an event's sourceLabel (at most 256 characters). */
export const agentLabel = (agent: Pick<Agent, "name">) => agent.name.slice(0, 256)

/** The event type of the record each agent write leaves in the timeline. */
export const AGENT_ACTION_EVENT = "agent.action"

/**
 * One workspace write under an idempotency key of its own: a tool may make several writes in
 * one HTTP request, which must not share the request's key (src/gateway/requestScope.ts).
 */
export const ownWrite = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => withIdempotencyKey(randomUUID())(self))

export interface AgentTimelineService {
  /** Appends the agent's own `event` at the next seq of its source. */
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

export const makeAgentTimeline = (): AgentTimelineService => ({
  appendNext: (taskId, event) => ownWrite(recordTaskEvent(taskId, { origin: "agent", ...event })),
  recordAction: (agent, taskId, tool, details) =>
    ownWrite(recordTaskEvent(taskId, {
      origin: "gateway",
      type: AGENT_ACTION_EVENT,
      source: agentSource(agent),
      sourceLabel: agentLabel(agent),
      payload: { tool, agentId: agent.id, ...details }
    })).pipe(
      Effect.asVoid,
      Effect.catch((e) =>
        Effect.logWarning(`mcp: could not record ${tool} by agent ${agent.id} on task ${taskId}: ${e.message}`)
      )
    )
})
