/**
 * Decision links on a gateway that verifies bearer tokens itself (SVC_JWT_JWKS), on the built
 * process: behind the login the token's person must be the link's (403 otherwise; a token that
 * does not verify is 401); with the link route left open at the proxy (no token at all) the
 * link names its person. Everything else on /v1 still needs a token.
 */
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AUDIENCE, ISSUER, jwksOf, makeKey, sign, type SigningKey } from "../identity/support.js"
import { http, type RunningService, startBuilt } from "../support/process.js"
import { acmeTask, writeWorld } from "./world.js"

const PUBLIC = "https://approvals.example.test"
const ADMIN_TOKEN = randomBytes(24).toString("base64url")

let dir = ""
let gw: RunningService
let key: SigningKey

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "links-jwt-"))
  key = await makeKey()
  const jwks = join(dir, "jwks.json")
  writeFileSync(jwks, JSON.stringify(jwksOf(key)))
  gw = await startBuilt({
    SVC_TENANT_SLUG: "acme",
    SVC_DATABASE_URL: `file:${join(dir, "w.db")}`,
    SVC_SEED_FILE: writeWorld(dir),
    SVC_PUBLIC_URL: PUBLIC,
    SVC_ADMIN_TOKEN: ADMIN_TOKEN,
    SVC_JWT_JWKS: jwks,
    SVC_JWT_ISSUER: ISSUER,
    SVC_JWT_AUDIENCE: AUDIENCE,
    SVC_JWT_TENANT_CLAIM: "tenant"
  })
}, 60_000)
afterAll(async () => {
  await gw?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const linksFor = async (taskId: string, actor: string) => {
  const res = await http("POST", `${gw.adminUrl}/workspace/links`, { tenantSlug: "acme", taskId, actor }, { authorization: `Bearer ${ADMIN_TOKEN}` })
  expect(res.status, res.text).toBe(201)
  return { approve: gw.url + (res.body.approveUrl as string).slice(PUBLIC.length) }
}
const bearer = async (sub: string) => ({ authorization: `Bearer ${await sign(key, { claims: { sub, tenant: "acme" } })}` })
const post = (url: string, headers: Record<string, string> = {}) => http("POST", url, {}, { "sec-fetch-site": "same-origin", ...headers })
const stepOf = async (taskId: string) =>
  ((await http("GET", `${gw.url}/v1/tasks/${taskId}/ui`, undefined, await bearer("reader@acme.example"))).body.step?.id ?? null) as string | null

describe("decision links behind a gateway that verifies tokens", { timeout: 30_000 }, () => {
  it("the signed-in person must be the link's; a token that does not verify is 401; no token: the link names its person", async () => {
    // JWT mode is on: a /v1 write without a token is refused.
    expect((await http("POST", `${gw.url}/v1/tasks/${acmeTask(0)}/action`, { type: "approved" })).status).toBe(401)

    const t1 = acmeTask(0)
    const links = await linksFor(t1, "ann@acme.example")
    expect((await post(links.approve, await bearer("bob@acme.example"))).status).toBe(403)
    expect((await post(links.approve, { authorization: "Bearer not.a.token" })).status).toBe(401)
    expect(await stepOf(t1)).toBe("controller_approval")
    const ok = await post(links.approve, await bearer("ANN@acme.example"))
    expect(ok.status, ok.text).toBe(200)
    expect(ok.body.actor).toBe("ann@acme.example")
    expect(await stepOf(t1)).toBe("cfo_approval")

    const t2 = acmeTask(1)
    const open = await linksFor(t2, "carol@acme.example")
    expect((await http("GET", open.approve)).status).toBe(200)
    const res = await post(open.approve)
    expect(res.status, res.text).toBe(200)
    expect(res.body.actor).toBe("carol@acme.example")
  })
})
