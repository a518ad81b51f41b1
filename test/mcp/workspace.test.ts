/**
 * The WorkspaceClient operation behind agent authentication, `findAgentByKeyHash`, on every
 * implementation of the port (the embedded store, the HTTP client over the workspace server in
 * front of it, with or without the store's extras), plus the fixture's `agents` records and step
 * assignments.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as References from "effect/References"
import * as Result from "effect/Result"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { hashApiKey, sameKeyHash } from "../../src/domain/apiKeys.js"
import { EmbeddedWorkspace, makeEmbeddedLayer } from "../../src/workspace/embedded/layer.js"
import { type Fixture, parseFixture } from "../../src/domain/fixture.js"
import { overStore } from "../support/storeWorkspace.js"
import { ACME, GLOBEX } from "../support/world.js"
import { clientOf, serverUrl, workspaceServer } from "../workspace/httpHarness.js"
import { AGENT_A, AGENT_GLOBEX, KEY_A, KEY_B, KEY_GLOBEX, mcpFixture } from "./world.js"

const fixture = Effect.runSync(parseFixture("mcp", mcpFixture()))

const quiet = Layer.succeed(References.MinimumLogLevel, "Warn")

/** The embedded store on a temp-file database seeded from `f` as a fixture file (SVC_SEED_FILE). */
const embedded = (f: Fixture | Record<string, unknown>) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.sync(() => mkdtempSync(join(tmpdir(), "mcp-workspace-"))),
        (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
      )
      const seedFile = join(dir, "fixture.json")
      writeFileSync(seedFile, JSON.stringify(f))
      return makeEmbeddedLayer({ url: pathToFileURL(join(dir, "workspace.db")).href, seedFile })
    })
  ).pipe(Layer.provide(quiet))

const implementations: ReadonlyArray<readonly [string, () => Layer.Layer<WorkspaceClient, unknown>]> = [
  ["embedded store", () => embedded(mcpFixture())],
  ["HTTP client over the workspace server (store without extras)", () => clientOf(overStore(fixture, (ws) => workspaceServer(ws)))],
  [
    "HTTP client over the workspace server (embedded)",
    () =>
      Layer.unwrap(Effect.map(EmbeddedWorkspace, (store) => clientOf(workspaceServer(store, store)))).pipe(
        Layer.provide(embedded(mcpFixture()))
      )
  ]
]

const tagOf = <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(self), (e) => (Result.isFailure(e) ? e.failure._tag : "success"))

describe("findAgentByKeyHash", () => {
  for (const [name, make] of implementations) {
    it.live(`${name}: the tenant's agent by its key's hash; any other key, or another tenant's agent, NotFound`, () =>
      Effect.gen(function*() {
        const ws = yield* WorkspaceClient
        const agent = yield* ws.findAgentByKeyHash(ACME, hashApiKey(KEY_A))
        expect(agent).toMatchObject({ id: AGENT_A, tenantId: ACME, kind: "claude", externalRef: "claude://agent_a", name: "Agent A" })
        expect(agent).not.toHaveProperty("apiKey")
        expect((yield* ws.findAgentByKeyHash(GLOBEX, hashApiKey(KEY_GLOBEX))).id).toBe(AGENT_GLOBEX)
        expect(yield* tagOf(ws.findAgentByKeyHash(GLOBEX, hashApiKey(KEY_A)))).toBe("NotFound")
        expect(yield* tagOf(ws.findAgentByKeyHash(ACME, hashApiKey(KEY_GLOBEX)))).toBe("NotFound")
        expect(yield* tagOf(ws.findAgentByKeyHash(ACME, hashApiKey("ak_unknown")))).toBe("NotFound")
        expect(yield* tagOf(ws.findAgentByKeyHash("not-a-tenant", hashApiKey(KEY_B)))).toBe("NotFound")
        // The runbook carries the assignment to whoever reads it.
        const runbook = yield* ws.getRunbook(ACME, "agent-close")
        expect(runbook.steps.map((s) => s.agentId)).toEqual([AGENT_A, AGENT_A, undefined])
      }).pipe(Effect.provide(make())))
  }

  it.live("the workspace API takes only a hash, in the body: a plaintext key or another field is a 400", () =>
    Effect.gen(function*() {
      const base = yield* serverUrl
      const post = (body: unknown) =>
        Effect.promise(() =>
          fetch(`${base}/workspace/tenants/${ACME}/agents/by-key-hash`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(body)
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
        )
      expect((yield* post({ keyHash: hashApiKey(KEY_A) })).body.id).toBe(AGENT_A)
      const plain = yield* post({ keyHash: KEY_A })
      expect(plain).toEqual({
        status: 400,
        body: { statusCode: 400, error: "Bad Request", message: "keyHash: keyHash must be 64 lowercase hex digits (a SHA-256)" }
      })
      expect((yield* post({ keyHash: hashApiKey(KEY_A), apiKey: KEY_A })).status).toBe(400)
      expect((yield* post({ keyHash: hashApiKey(KEY_GLOBEX) })).status).toBe(404)
    }).pipe(Effect.provide(overStore(fixture, (ws) => workspaceServer(ws)))))
})

describe("key hashes", () => {
  it("are SHA-256 hex; compared in constant time, any malformed one unequal", () => {
    expect(hashApiKey("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(sameKeyHash(hashApiKey("abc"), hashApiKey("abc"))).toBe(true)
    expect(sameKeyHash(hashApiKey("abc"), hashApiKey("abd"))).toBe(false)
    expect(sameKeyHash("0".repeat(64), "0".repeat(64).toUpperCase())).toBe(true)
    expect(sameKeyHash("x", "x")).toBe(false)
    expect(sameKeyHash("A".repeat(64), "A".repeat(64))).toBe(false)
  })
})

describe("fixture: agents and step assignments", () => {
  const problems = (f: Record<string, unknown>) =>
    Effect.runSync(Effect.flip(parseFixture("f.json", f))).message

  it("a step's agent must be a registered agent of the workflow's tenant", () => {
    const f = mcpFixture()
    const [close] = f.workflows.slice(-1) as Array<any>
    close.runbook.steps[2].agentId = AGENT_GLOBEX
    close.runbook.steps[1].agentId = "99999999-0000-4000-8000-000000000000"
    const message = problems(f)
    expect(message).toContain(`$.workflows[4].runbook.steps[2].agentId: agent of another tenant`)
    expect(message).toContain(`$.workflows[4].runbook.steps[1].agentId: no agent 99999999-0000-4000-8000-000000000000`)
  })

  it("agents name a known tenant, unique keys of at least 16 characters, and no unknown keys", () => {
    const f = mcpFixture()
    f.agents[1]!.apiKey = f.agents[0]!.apiKey
    ;(f.agents[2] as any).tenantId = "99999999-0000-4000-8000-000000000000"
    expect(problems(f)).toMatch(/\$\.agents\[1\]\.apiKey: the same key as another agent[\s\S]*\$\.agents\[2\]\.tenantId: no tenant/)
    expect(problems({ agents: [{ ...mcpFixture().agents[0], tenantId: ACME, apiKey: "short" }] })).toContain(
      "$.agents[0].apiKey: apiKey must be at least 16 characters"
    )
    expect(problems({ ...mcpFixture(), agents: [{ ...mcpFixture().agents[0], secret: "x" }] })).toContain("$.agents[0].secret")
  })

  it.live("loading the same fixture twice keeps one agent and the same key valid; a bad externalRef stops the load", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "mcp-seed-"))
      try {
        const url = pathToFileURL(join(dir, "workspace.db")).href
        const seedFile = join(dir, "fixture.json")
        writeFileSync(seedFile, JSON.stringify(mcpFixture()))
        const once = Effect.flatMap(EmbeddedWorkspace, (ws) =>
          Effect.zip(ws.findAgentByKeyHash(ACME, hashApiKey(KEY_A)), ws.listAgents(ACME)))
        const first = yield* Effect.scoped(Effect.provide(once, Layer.provide(makeEmbeddedLayer({ url, seedFile }), quiet)))
        const second = yield* Effect.scoped(Effect.provide(once, Layer.provide(makeEmbeddedLayer({ url, seedFile }), quiet)))
        expect(second[0].id).toBe(first[0].id)
        expect(second[1].map((a) => a.id)).toEqual(first[1].map((a) => a.id))
        const bad = mcpFixture()
        bad.agents[0]!.externalRef = "openai://x"
        writeFileSync(seedFile, JSON.stringify(bad))
        const failure = yield* Effect.flip(Effect.scoped(Effect.provide(once, Layer.provide(makeEmbeddedLayer({ url, seedFile }), quiet))))
        expect(String((failure as { message?: unknown }).message)).toContain(`$.agents[0]: externalRef: scheme "openai" does not match kind "claude"`)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }))
})
