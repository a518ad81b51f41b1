/**
 * The agent registry (spec §4): agents bound to a tenant, each with a provisioned API key of
 * which only a SHA-256 hash is stored. The plaintext is returned once, by create; list and
 * get never carry it. Versions are recorded per agent.
 */
import * as SqlClient from "effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { randomBytes, randomUUID } from "node:crypto"
import { BadRequest, Conflict, NotFound } from "../../api/errors.js"
import { Uuid } from "../../api/ids.js"
import { charCount } from "../../api/textLength.js"
import { resolveExternalRef } from "../../domain/agentRef.js"
import { hashApiKey, sameKeyHash } from "../../domain/apiKeys.js"
import { fromJson, guard, nowIso, toJson } from "./db.js"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

export const CreateAgentInput = Schema.Struct({
  kind: Schema.String.annotate({ description: "Agent runtime kind; the scheme of externalRef (e.g. claude, openai)" }),
  externalRef: Schema.String.annotate({ description: "Native id, or `<kind>://<native-id>`" }),
  tenantSlug: Schema.optional(Schema.String),
  tenantId: Schema.optional(Uuid),
  name: Schema.String
}).annotate({ identifier: "CreateAgentInput", description: "Exactly one of tenantSlug / tenantId (or both, agreeing)" })
export type CreateAgentInput = typeof CreateAgentInput.Type

export const CreateAgentVersionInput = Schema.Struct({
  version: Schema.String,
  config: Schema.optional(JsonObject)
}).annotate({ identifier: "CreateAgentVersionInput" })
export type CreateAgentVersionInput = typeof CreateAgentVersionInput.Type

// The records the registry returns are the contract's (WorkspaceApi), not a copy of them.
export { Agent, AgentVersion, CreatedAgent } from "../../upstream/registry.js"
import type { Agent, AgentVersion, CreatedAgent } from "../../upstream/registry.js"

export { hashApiKey, resolveExternalRef }

/** 256 random bits, URL-safe; the prefix makes a leaked key recognizable to secret scanners. */
const newApiKey = () => `ak_${randomBytes(32).toString("base64url")}`

const bad = (message: string) => Effect.fail(new BadRequest({ message }))

interface AgentRow {
  readonly id: string
  readonly kind: string
  readonly external_ref: string
  readonly tenant_id: string
  readonly name: string
  readonly created_at: string
}
interface VersionRow {
  readonly agent_id: string
  readonly version: string
  readonly config: string
  readonly created_at: string
}

const versionOf = (v: VersionRow): AgentVersion => ({
  agentId: v.agent_id,
  version: v.version,
  config: fromJson(v.config),
  createdAt: v.created_at
})

export const makeAgentRegistry = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const withVersions = (rows: ReadonlyArray<AgentRow>) =>
    Effect.gen(function*() {
      if (rows.length === 0) return [] as Array<Agent>
      const versions = yield* sql<VersionRow>`
        SELECT agent_id, version, config, created_at FROM agent_versions
        WHERE ${sql.in("agent_id", rows.map((r) => r.id))} ORDER BY rowid`
      return rows.map((r): Agent => ({
        id: r.id,
        kind: r.kind,
        externalRef: r.external_ref,
        tenantId: r.tenant_id,
        name: r.name,
        createdAt: r.created_at,
        versions: versions.filter((v) => v.agent_id === r.id).map(versionOf)
      }))
    })

  const agentById = (id: string) =>
    Effect.gen(function*() {
      const rows = yield* sql<AgentRow>`SELECT id, kind, external_ref, tenant_id, name, created_at FROM agents WHERE id = ${id}`
      if (rows.length === 0) return yield* Effect.fail(new NotFound({ message: `Agent ${id} not found` }))
      const [agent] = yield* withVersions(rows)
      return agent!
    })

  const tenantOf = (input: CreateAgentInput) =>
    Effect.gen(function*() {
      if (input.tenantSlug === undefined && input.tenantId === undefined) return yield* bad("tenantSlug or tenantId is required")
      const rows = yield* sql<{ id: string; slug: string }>`
        SELECT id, slug FROM tenants WHERE ${
        input.tenantId !== undefined ? sql`id = ${input.tenantId}` : sql`slug = ${input.tenantSlug!}`
      }`
      const tenant = rows[0]
      if (tenant === undefined) return yield* bad(`tenant: unknown tenant "${input.tenantId ?? input.tenantSlug}"`)
      if (input.tenantSlug !== undefined && input.tenantSlug !== tenant.slug) return yield* bad("tenantSlug and tenantId name different tenants")
      return tenant.id
    })

  const createAgent = (input: CreateAgentInput) =>
    Effect.gen(function*() {
      const name = input.name.trim()
      if (name === "" || charCount(name) > 256) return yield* bad("name: must be 1-256 characters")
      const externalRef = yield* resolveExternalRef(input.kind, input.externalRef)
      const tenantId = yield* tenantOf(input)
      const apiKey = newApiKey()
      const agent = { id: randomUUID(), kind: input.kind, externalRef, tenantId, name, createdAt: nowIso(), versions: [] }
      // One agent per reference and tenant: a second registration of the same kind://id would be
      // a second key for the same agent, which nobody asked for. The check and the insert are one
      // transaction (writes take the lock on the writer connection, ./libsql.ts). PostgreSQL reads
      // committed rows only, so racing registrations (two replicas) would each find none: they
      // take a lock on the reference first.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql.onDialectOrElse({
          pg: () => Effect.asVoid(sql`SELECT pg_advisory_xact_lock(hashtextextended(${"agent:" + tenantId + ":" + externalRef}::text, 0))`),
          orElse: () => Effect.void
        })
        const [existing] = yield* sql<{ readonly id: string }>`SELECT id FROM agents
          WHERE tenant_id = ${tenantId} AND kind = ${agent.kind} AND external_ref = ${externalRef} ORDER BY rowid LIMIT 1`
        if (existing !== undefined) {
          return yield* Effect.fail(
            new Conflict({
              message: `${externalRef} is already registered for this tenant as agent ${existing.id}; ` +
                "delete it first to register it again"
            })
          )
        }
        yield* sql`INSERT INTO agents ${
          sql.insert({
            id: agent.id,
            kind: agent.kind,
            external_ref: externalRef,
            tenant_id: tenantId,
            name,
            api_key_hash: hashApiKey(apiKey),
            created_at: agent.createdAt
          })
        }`
      }))
      return { ...agent, apiKey } satisfies CreatedAgent
    }).pipe(guard("createAgent"))

  const listAgents = (tenantId?: string) =>
    sql<AgentRow>`
      SELECT id, kind, external_ref, tenant_id, name, created_at FROM agents
      ${tenantId !== undefined ? sql`WHERE tenant_id = ${tenantId}` : sql``} ORDER BY rowid`.pipe(
      Effect.flatMap(withVersions),
      guard("listAgents")
    )

  const deleteAgent = (id: string) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* agentById(id)
      yield* sql`DELETE FROM agent_versions WHERE agent_id = ${id}`
      yield* sql`DELETE FROM agents WHERE id = ${id}`
    })).pipe(guard("deleteAgent"))

  /** An identical re-post returns the recorded version; a different config for it is a Conflict. */
  const createAgentVersion = (id: string, input: CreateAgentVersionInput) =>
    sql.withTransaction(Effect.gen(function*() {
      const version = input.version.trim()
      if (version === "" || charCount(version) > 64) return yield* bad("version: must be 1-64 characters")
      yield* agentById(id)
      const config = toJson(input.config ?? {})
      const existing = yield* sql<VersionRow>`
        SELECT agent_id, version, config, created_at FROM agent_versions WHERE agent_id = ${id} AND version = ${version}`
      if (existing[0] !== undefined) {
        return existing[0].config === config
          ? versionOf(existing[0])
          : yield* Effect.fail(new Conflict({ message: `Version ${version} of agent ${id} is already recorded with a different config` }))
      }
      const row: VersionRow = { agent_id: id, version, config, created_at: nowIso() }
      yield* sql`INSERT INTO agent_versions ${sql.insert({ ...row })}`
      return versionOf(row)
    })).pipe(guard("createAgentVersion"))

  /** The agent holding this API key (the tool server's authentication); NotFound for any other key. */
  const authenticateAgent = (apiKey: string) =>
    sql<{ id: string }>`SELECT id FROM agents WHERE api_key_hash = ${hashApiKey(apiKey)}`.pipe(
      Effect.flatMap((rows) =>
        rows[0] === undefined ? Effect.fail(new NotFound({ message: "No agent holds this API key" })) : agentById(rows[0].id)
      ),
      guard("authenticateAgent")
    )

  /**
   * The tool server's lookup: the agent of `tenantId` whose key hashes to `keyHash`, the hashes
   * compared in constant time; NotFound for any other key, another tenant's agent's included.
   */
  const findAgentByKeyHash = (tenantId: string, keyHash: string) =>
    sql<{ id: string; api_key_hash: string }>`
      SELECT id, api_key_hash FROM agents WHERE api_key_hash = ${keyHash} AND tenant_id = ${tenantId}`.pipe(
      Effect.flatMap(([row]) =>
        row !== undefined && sameKeyHash(row.api_key_hash, keyHash)
          ? agentById(row.id)
          : Effect.fail(new NotFound({ message: "No agent of this tenant holds this API key" }))
      ),
      guard("findAgentByKeyHash")
    )

  return {
    createAgent,
    findAgentByKeyHash,
    listAgents,
    getAgent: (id: string) => agentById(id).pipe(guard("getAgent")),
    deleteAgent,
    createAgentVersion,
    authenticateAgent
  }
})
