/**
 * The decision-link store on PostgreSQL (replicas share it) and on SQLite: claims race to
 * exactly one winner, a used or revoked pair stays so, a person's links are found however
 * their name is spelt, the generated key is one key, and a token names only its own tenant.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { EmbeddedWorkspace, makeEmbeddedLayerWithSql } from "../../src/workspace/embedded/layer.js"
import { testDatabase } from "../support/postgres.js"
import { ACME, acmeTask, GLOBEX, writeWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test"
const tokenOf = (url: string) => url.slice(`${PUBLIC}/links/`.length)

const scenario = (url: string, seedFile: string) => {
  const layer = makeEmbeddedLayerWithSql({ url, seedFile, explicitPublicUrl: Option.some(PUBLIC), retryInterval: "1 hour" }).pipe(
    Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
  )
  return Effect.gen(function*() {
    const ws = yield* EmbeddedWorkspace
    expect(ws.linksEnabled).toBe(true)
    for (let round = 0; round < 3; round++) {
      const links = yield* ws.createDecisionLinks({ tenantId: ACME, taskId: acmeTask(round), actor: "Ann@Acme.example" })
      const opened = yield* ws.openDecisionLink(ACME, tokenOf(links.rejectUrl))
      expect(opened._tag).toBe("Open")
      if (opened._tag !== "Open") return
      expect(opened.link).toMatchObject({ taskId: acmeTask(round), stepId: "controller_approval", decision: "reject", actor: "Ann@Acme.example" })
      // Another tenant's gateway: the token names nothing there.
      expect((yield* ws.openDecisionLink(GLOBEX, tokenOf(links.rejectUrl)))._tag).toBe("Unknown")
      const claims = yield* Effect.all(Array.from({ length: 8 }, () => ws.claimDecisionLink(opened.link.pairId, "reject")), { concurrency: "unbounded" })
      expect(claims.filter((c) => c)).toHaveLength(1)
      // While it decides, either link opened says which of the pair holds it.
      expect(yield* ws.openDecisionLink(ACME, tokenOf(links.approveUrl))).toMatchObject({ _tag: "Open", deciding: "reject" })
      yield* ws.completeDecisionLink(opened.link.pairId, "reject")
      const used = yield* ws.openDecisionLink(ACME, tokenOf(links.approveUrl))
      expect(used).toMatchObject({ _tag: "Used", usedDecision: "reject" })
      expect(yield* ws.claimDecisionLink(opened.link.pairId, "approve")).toBe(false)
      // Revoking does not touch a used pair.
      expect(yield* ws.revokeDecisionLinks({ tenantId: ACME, taskId: acmeTask(round) })).toEqual({ revoked: 0, deciding: 0 })
    }
    const a = yield* ws.createDecisionLinks({ tenantId: ACME, taskId: acmeTask(5), actor: "erin@acme.example", expiresInMs: 60_000 })
    yield* ws.createDecisionLinks({ tenantId: ACME, taskId: acmeTask(6), actor: "ＥＲＩＮ@ACME.example" })
    expect(yield* ws.revokeDecisionLinks({ tenantId: GLOBEX, actor: "erin@acme.example" })).toEqual({ revoked: 0, deciding: 0 })
    expect(yield* ws.revokeDecisionLinks({ tenantId: ACME, actor: "Erin@acme.example" })).toEqual({ revoked: 2, deciding: 0 })
    expect((yield* ws.openDecisionLink(ACME, tokenOf(a.approveUrl)))._tag).toBe("Revoked")
    // A refused decision lets go of its claim: the pair can be claimed again.
    const b = yield* ws.createDecisionLinks({ tenantId: ACME, taskId: acmeTask(7), actor: "bob@acme.example" })
    const pairId = tokenOf(b.approveUrl).split(".")[0]!
    expect(yield* ws.claimDecisionLink(pairId, "approve")).toBe(true)
    yield* ws.releaseDecisionLink(pairId)
    // Let go: nobody is deciding with it.
    const released = yield* ws.openDecisionLink(ACME, tokenOf(b.approveUrl))
    expect(released._tag === "Open" && released.deciding).toBe(undefined)
    expect(yield* ws.claimDecisionLink(pairId, "approve")).toBe(true)
  }).pipe(Effect.provide(layer))
}

describe("the decision-link store", () => {
  it.live("on PostgreSQL", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "links-pg-"))
      try {
        const url = yield* Effect.promise(() => testDatabase("links"))
        yield* scenario(url, writeWorld(dir))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }), 60_000)

  it.live("on SQLite", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "links-sqlite-"))
      try {
        yield* scenario(`file:${join(dir, "w.db")}`, writeWorld(dir))
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }), 60_000)
})
