/**
 * The embedded workspace: the WorkspaceClient port on SQLite (@effect/sql-libsql) or PostgreSQL,
 * with the semantics of the reference implementation in ../memory.ts. One module per kind of
 * record (./tenants.ts, ./tasks.ts, ./events.ts, ./documents.ts, ./data.ts, ./subledgers.ts,
 * ./gl.ts, ./agents.ts) over the helpers they share (./transaction.ts); here they are put together.
 *
 * Writes that a signal follows (documents, data batches, approve/reject, row actions) store
 * the write and its signal rows in one transaction; after the commit the outbox delivers
 * them (./outbox.ts). What a caller must hear about (404, 400 with currentStatus, INVALID_FIELD)
 * is checked inside that transaction, before anything is recorded, with the same rules the
 * engine applies on delivery.
 */
import * as Effect from "effect/Effect"
import type { BadRequest, Conflict, NotFound } from "../../api/errors.js"
import type { WorkspaceClientService, WsEffect } from "../../upstream/WorkspaceClient.js"
import {
  type Agent,
  type AgentVersion,
  type CreateAgentInput,
  type CreateAgentVersionInput,
  type CreatedAgent,
  makeAgentRegistry
} from "./agents.js"
import { dataRecords } from "./data.js"
import { makeDocumentRecords } from "./documents.js"
import { eventRecords } from "./events.js"
import { glRecords, type GlSessions } from "./gl.js"
import { inboxRecords } from "./inbox.js"
import type { DeliveryReport, RelayOptions } from "./outbox.js"
import { subledgerRecords } from "./subledgers.js"
import { taskRecords } from "./tasks.js"
import { tenantRecords } from "./tenants.js"
import { makeTransactions } from "./transaction.js"
import { DEFAULT_GL_SESSION_TTL_MS } from "../../domain/glServices.js"

export type { GlSession } from "./gl.js"

/** The port plus what the workspace HTTP API serves beyond it: GL webhook, agent registry, outbox. */
export interface EmbeddedWorkspace extends WorkspaceClientService, GlSessions {
  readonly createAgent: (input: CreateAgentInput) => WsEffect<CreatedAgent, BadRequest | Conflict>
  readonly listAgents: (tenantId?: string) => WsEffect<ReadonlyArray<Agent>>
  readonly getAgent: (id: string) => WsEffect<Agent, NotFound>
  readonly deleteAgent: (id: string) => WsEffect<void, NotFound>
  readonly createAgentVersion: (id: string, input: CreateAgentVersionInput) => WsEffect<AgentVersion, NotFound | BadRequest | Conflict>
  /** The agent holding this API key; NotFound for an unknown key (the caller answers 401). */
  readonly authenticateAgent: (apiKey: string) => WsEffect<Agent, NotFound>
  /** Delivers pending outbox signals now (the relay also does, in the background). */
  readonly deliverPending: (options?: { readonly force?: boolean }) => Effect.Effect<DeliveryReport>
  /** The outbox relay: delivers signals in the background until interrupted (the layer forks it). */
  readonly relay: Effect.Effect<never>
}

export interface EmbeddedOptions {
  /** Base URL of the process serving the GL connect page, for connect-session URLs. */
  readonly publicUrl?: string | undefined
  /** A connect session older than this can no longer be opened or completed; default 15 minutes. */
  readonly glSessionTtlMs?: number | undefined
  /** Batching, concurrency and waits of signal delivery (./outbox.ts). */
  readonly relay?: RelayOptions | undefined
}

export const makeEmbeddedWorkspaceWith = (options: EmbeddedOptions = {}) =>
  Effect.gen(function*() {
    const tx = yield* makeTransactions(options.relay)
    const agents = yield* makeAgentRegistry
    const publicUrl = (options.publicUrl ?? "http://127.0.0.1:3000").replace(/\/$/, "")
    // Sessions created before the cutoff (ISO text, as created_at is) have expired: they name nothing.
    const glSessionTtlMs = options.glSessionTtlMs ?? DEFAULT_GL_SESSION_TTL_MS
    const service: EmbeddedWorkspace = {
      ...tenantRecords(tx),
      ...taskRecords(tx),
      ...inboxRecords(tx),
      ...eventRecords(tx),
      ...(yield* makeDocumentRecords(tx)),
      ...dataRecords(tx),
      ...subledgerRecords(tx),
      ...glRecords(tx, publicUrl, glSessionTtlMs),
      ...agents,
      deliverPending: tx.outbox.deliverPending,
      relay: tx.outbox.relay
    }
    return service
  })

/** The embedded workspace over the SqlClient in context (run migrations first). */
export const makeEmbeddedWorkspace = makeEmbeddedWorkspaceWith()
