/**
 * Several gateways in front of one workspace service (`npm run workspace`, SVC_WORKSPACE_URL)
 * are replicas too: each reads its own sockets and forwards its arrival stamp
 * (`x-svc-arrived-at`), and a busy host leaves one reading a moment's requests tens of
 * milliseconds after another. A decision whose arrival another process stamped waits the
 * replicas' settle time (100 ms unless SVC_DECISION_SETTLE_MS says otherwise: 300 here) whatever the
 * workspace's database: with SQLite's 3 ms, a gateway reading its half of 20 identical
 * approvals 40 ms late decided the next step too. Real processes, SQLite.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { http, type RunningService, startBuilt, startService, WORKSPACE_ENTRY } from "../support/process.js"
import { sendTogether } from "../support/together.js"

/**
 * A round whose second gateway this process resumed more than this many ms after stopping it
 * (its 40 ms timer fired late on a loaded machine) did not test a 40 ms lag: it is run again, at
 * most MAX_RERUNS times. Seen once in a full CI run: round 0 decided the CFO's step too, the
 * lag being then whatever the machine made it, past the 100 ms settle time.
 */
const RESUMED_WITHIN_MS = 55
const MAX_RERUNS = 5

const FIXTURE = fileURLToPath(new URL("../fixtures/decisions.json", import.meta.url))
const ACME_US = "8efaebe3-f600-4ec5-a77b-afb37a9b252d"

let dir: string
const running: Array<RunningService> = []
const gateways: Array<RunningService> = []

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gateways-together-"))
  // The replicas' settle time at 300 ms instead of 100: the second gateway, resumed 40-55 ms
  // after its stop, still reads its ten connections one per turn of its loop, and on a machine
  // the rest of the suite loads that took it past 100 ms (round 0 moved two steps, once in four
  // clean-clone runs here). The 40 ms lag under test stays inside either.
  const workspace = await startService(
    { SVC_DATABASE_URL: pathToFileURL(join(dir, "workspace.db")).href, SVC_SEED_FILE: FIXTURE, SVC_DECISION_SETTLE_MS: "300" },
    WORKSPACE_ENTRY,
    "SVC_WORKSPACE_PORT"
  )
  running.push(workspace)
  gateways.push(...await Promise.all([0, 1].map(() => startBuilt({ SVC_WORKSPACE_URL: workspace.url, SVC_TENANT_SLUG: "acme" }))))
  running.push(...gateways)
}, 90_000)

afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("two gateways in front of one workspace service (real processes)", () => {
  it("20 identical approvals, half to each gateway, the second reading its half 40 ms late: all {ok:true}, one step (3 rounds)", async () => {
    let reruns = 0
    for (let round = 0; round < 3; round++) {
      const created = await http("POST", `${gateways[0]!.url}/v1/entities/${ACME_US}/tasks`, { workflowId: "payment-run", context: {} })
      expect(created.status).toBe(201)
      const taskId = created.body.id as string
      let stoppedAt = 0
      let resumedAfter = 0
      const answers = await sendTogether(
        gateways[0]!.url,
        Array.from({ length: 20 }, (_, j) => ({
          url: gateways[j % 2]!.url,
          method: "POST",
          path: `/v1/tasks/${taskId}/action`,
          body: { type: "approved" }
        })),
        {
          beforeWrite: () => {
            gateways[1]!.kill("SIGSTOP")
            stoppedAt = performance.now()
          },
          afterWrite: () =>
            setTimeout(() => {
              resumedAfter = performance.now() - stoppedAt
              gateways[1]!.kill("SIGCONT")
            }, 40)
        }
      )
      if (resumedAfter > RESUMED_WITHIN_MS && reruns < MAX_RERUNS) {
        reruns++
        round--
        continue
      }
      expect(answers.map((a) => `${a.status} ${a.text}`), `round ${round}`).toEqual(Array.from({ length: 20 }, () => `200 {"ok":true}`))
      const snapshots = await http("GET", `${gateways[1]!.url}/v1/tasks/${taskId}/snapshots`)
      expect(Object.keys(snapshots.body), `round ${round}`).toEqual(["controller_approval"])
    }
  }, 60_000)
})
