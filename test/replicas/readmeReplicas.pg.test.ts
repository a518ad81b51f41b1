/**
 * "Scaling out" followed as written: the README's SQL creates the database and its
 * role, and two replicas start on one host with only what the README sets (the same
 * SVC_DATABASE_URL and SVC_TENANT_SLUG, each its own PORT; no SVC_ADMIN_PORT). Both serve, each
 * has its own admin listener at PORT + 1, and an agent registered through one replica's admin
 * listener is listed by the other's.
 *
 * The test server has no TLS, so the README URL's sslmode is dropped here (TLS itself:
 * ./databaseTls.pg.test.ts); host, port and names are the test's, the rest is the README's.
 */
import { readFileSync } from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import * as Pg from "pg"
import { freePortPair, killAllBuilt, spawnBuilt, type BuiltRun } from "../ops/builtRun.js"

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8")
const scalingOut = README.slice(README.indexOf("## Scaling out"), README.indexOf("\n## ", README.indexOf("## Scaling out") + 5))

const block = (lang: string) => {
  const m = new RegExp("```" + lang + "\\n([\\s\\S]*?)```").exec(scalingOut)
  if (m === null) throw new Error(`README "Scaling out" has no \`\`\`${lang} block`)
  return m[1]!
}

const replicas: Array<BuiltRun> = []
afterAll(async () => {
  for (const r of replicas) r.child.kill("SIGTERM")
  await Promise.all(replicas.map((r) => r.exited))
  killAllBuilt()
})

const until = async (what: string, run: BuiltRun, check: () => Promise<boolean>, ms = 60_000) => {
  const deadline = Date.now() + ms
  for (;;) {
    if (run.child.exitCode !== null) throw new Error(`${what}: the replica exited ${run.child.exitCode}:\n${run.output()}`)
    if (await check().catch(() => false)) return
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms:\n${run.output()}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe("Scaling out as the README says", { timeout: 120_000 }, () => {
  it("the README's SQL, then two replicas on one host with only SVC_DATABASE_URL, SVC_TENANT_SLUG and PORT: both serve", async () => {
    const { inject } = await import("vitest")
    const admin = new URL(inject("pgAdminUrl"))
    expect(admin.host).not.toBe("")

    // The README's names, made unique on the run's server (roles are server-wide).
    const name = `tenant_gateway_${Math.random().toString(36).slice(2, 10)}`
    const sql = block("sql").replaceAll("tenant_gateway", name)
    const client = new Pg.Client({ connectionString: admin.toString() })
    await client.connect()
    try {
      for (const statement of sql.split(";").map((s) => s.trim()).filter((s) => s !== "")) await client.query(statement)
    } finally {
      await client.end()
    }

    const sh = block("sh")
    const exported = Object.fromEntries([...sh.matchAll(/^export (\w+)='?([^'\n]*)'?$/gm)].map((m) => [m[1]!, m[2]!]))
    expect(Object.keys(exported).sort()).toEqual(["SVC_DATABASE_URL", "SVC_TENANT_SLUG"])
    const starts = [...sh.matchAll(/^(\w+)=(\d+) npm start/gm)].map((m) => ({ setting: m[1]!, port: Number(m[2]) }))
    expect(starts.map((s) => s.setting)).toEqual(["PORT", "PORT"])
    // The README's ports are two apart; so are the test's (free pairs: PORT and PORT + 1).
    expect(starts[1]!.port - starts[0]!.port).toBe(2)

    const url = new URL(exported.SVC_DATABASE_URL!.replaceAll("tenant_gateway", name))
    url.hostname = admin.hostname
    url.port = admin.port
    url.searchParams.delete("sslmode")

    const first = await freePortPair()
    let second = await freePortPair()
    while (Math.abs(second - first) < 2) second = await freePortPair()
    for (const port of [first, second]) {
      replicas.push(spawnBuilt({
        SVC_DATABASE_URL: url.toString(),
        SVC_TENANT_SLUG: exported.SVC_TENANT_SLUG!,
        PORT: String(port)
      }))
    }
    const [a, b] = replicas as [BuiltRun, BuiltRun]
    await Promise.all([[a, first], [b, second]].map(([run, port]) =>
      until(`replica on ${port} ready`, run as BuiltRun, async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200)
    ))
    for (const port of [first, second]) {
      const entities = await fetch(`http://127.0.0.1:${port}/v1/entities`)
      expect(entities.status).toBe(200)
      expect(((await entities.json()) as Array<{ slug: string }>).length).toBeGreaterThan(0)
    }
    // Each start-up line names its own admin listener, at PORT + 1.
    expect(a.output()).toContain(`admin:     http://127.0.0.1:${first + 1}/workspace`)
    expect(b.output()).toContain(`admin:     http://127.0.0.1:${second + 1}/workspace`)

    // The registry is shared: registered at the second replica's admin listener, listed at the first's.
    const created = await fetch(`http://127.0.0.1:${second + 1}/workspace/registry/agents`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "claude", externalRef: "claude://readme-replicas", name: "Replica check", tenantSlug: exported.SVC_TENANT_SLUG })
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as { id: string }
    const listed = (await (await fetch(`http://127.0.0.1:${first + 1}/workspace/registry/agents`)).json()) as Array<{ id: string }>
    expect(listed.map((agent) => agent.id)).toContain(id)

    // The tables belong to the README's role: it migrated the database itself.
    const check = new Pg.Client({ connectionString: url.toString() })
    await check.connect()
    try {
      const { rows } = await check.query<{ owner: string }>(
        "SELECT DISTINCT tableowner AS owner FROM pg_tables WHERE schemaname = 'public'"
      )
      expect(rows.map((r) => r.owner)).toEqual([name])
    } finally {
      await check.end()
    }
  })
})
