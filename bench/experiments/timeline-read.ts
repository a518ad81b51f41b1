/**
 * The embedded store's timeline read alone: a task with N events (payloads of ~200 bytes of
 * mixed text) on a fresh SQLite file, then `listEvents` as the gateway asks for its default
 * answer (every event up to 1 MiB, then hasMore) and for 100-event pages, timed by the process's
 * CPU. Run it on two trees to compare (`before=<dir> after=.`): each in its own child process.
 *
 * Usage: tsx bench/experiments/timeline-read.ts [events=10000] [reads=40] [name=dir ...]
 */
import { execFileSync } from "node:child_process"
import { resolve } from "node:path"

const [eventsArg = "10000", readsArg = "40", ...trees] = process.argv.slice(2)

if (process.env.TIMELINE_CHILD === "1") {
  const root = process.env.TIMELINE_ROOT!
  const { Context, Effect, Layer, SqlClient } = {
    Context: await import("effect/Context"),
    Effect: await import("effect/Effect"),
    Layer: await import("effect/Layer"),
    SqlClient: await import("effect/sql/SqlClient")
  }
  const { mkdtempSync, rmSync, readFileSync } = await import("node:fs")
  const { tmpdir } = await import("node:os")
  const { join } = await import("node:path")
  const { pathToFileURL } = await import("node:url")
  const layerMod = await import(join(root, "src/workspace/embedded/layer.ts"))
  const fixtureMod = await import(join(root, "src/domain/fixture.ts"))
  const fixtureJson = JSON.parse(readFileSync(join(root, "test/fixtures/example.json"), "utf8"))
  const fixture = Effect.runSync(fixtureMod.parseFixture("example.json", fixtureJson))
  const dir = mkdtempSync(join(tmpdir(), "timeline-read-"))
  const n = Number(eventsArg)
  const reads = Number(readsArg)
  const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }
  await Effect.runPromise(Effect.scoped(Effect.gen(function*(): Generator<any, void, any> {
    const context = yield* Layer.build(layerMod.makeEmbeddedLayerWithSql({ url: pathToFileURL(join(dir, "w.db")).href, fixture, checkpointIntervalMs: 0 }))
    const store = Context.get(context, layerMod.EmbeddedWorkspace) as any
    const sql = Context.get(context, SqlClient.SqlClient) as any
    const [task] = yield* sql`SELECT id, tenant_id FROM tasks LIMIT 1`
    yield* sql`DELETE FROM events WHERE task_id = ${task.id}`
    for (let i = 0; i < n; i += 500) {
      yield* (sql.withTransaction(Effect.forEach(Array.from({ length: Math.min(500, n - i) }, (_, j) => i + j), (k) =>
        sql`INSERT INTO events (task_id, seq, origin, tenant_id, root_task_id, type, source, source_label, payload, group_key, created_at)
          VALUES (${task.id}, ${k}, 'producer', ${task.tenant_id}, ${task.id}, 'step.note', 'erp', 'ERP ✓', ${JSON.stringify({ k, note: `Prüfung ${k} — 東京 ok`, amount: k * 1.5, lines: ["a", "b", "c"], ref: "x".repeat(80) })}, NULL, '2026-01-01T00:00:00.000Z')`, { discard: true })) as any)
    }
    for (let i = 0; i < 5; i++) yield* store.listEvents(task.tenant_id, task.id, { limit: 10_000, maxBytes: 1024 * 1024 })
    let t0 = cpu(); let got = 0
    for (let i = 0; i < reads; i++) got = (yield* store.listEvents(task.tenant_id, task.id, { limit: 10_000, maxBytes: 1024 * 1024 })).events.length
    const whole = (cpu() - t0) / reads
    t0 = cpu()
    for (let i = 0; i < reads * 10; i++) yield* store.listEvents(task.tenant_id, task.id, { limit: 100 })
    const page = (cpu() - t0) / (reads * 10)
    console.log(JSON.stringify({ whole, got, page }))
  })) as any)
  rmSync(dir, { recursive: true, force: true })
} else {
  const runs = trees.map((t) => { const [name, dir] = t.split("="); return { name: name!, dir: resolve(dir!) } })
  const results = new Map<string, Array<{ whole: number; page: number; got: number }>>()
  for (let round = 0; round < 3; round++) {
    for (const run of round % 2 === 0 ? runs : [...runs].reverse()) {
      const out = execFileSync(process.execPath, ["--import", "tsx", import.meta.filename, eventsArg, readsArg], {
        env: { ...process.env, TIMELINE_CHILD: "1", TIMELINE_ROOT: run.dir }, cwd: run.dir, encoding: "utf8"
      })
      const r = JSON.parse(out.trim().split("\n").pop()!)
      results.set(run.name, [...(results.get(run.name) ?? []), r])
    }
  }
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const [name, rs] of results) {
    console.log(`${name}: default answer (${rs[0]!.got} events, 1 MiB) ${median(rs.map((r) => r.whole)).toFixed(1)} ms CPU; 100-event page ${median(rs.map((r) => r.page)).toFixed(2)} ms CPU`)
  }
}
