/**
 * The run's global set-up (vitest.config.ts): the PostgreSQL server (./pgGlobalSetup.ts) and the
 * build with the run's Chromium (../console/globalSetup.ts) at the same time. Vitest runs the
 * files of `globalSetup` one after another, so a PostgreSQL start (initdb and a server, 2-5 s)
 * waited for the build before. Either failing stops what the other started. Before both, the
 * run's temporary directory moves to memory where it can (./memoryTmpdir.ts).
 */
import type { TestProject } from "vitest/node"
import builtAndChromium from "../console/globalSetup.js"
import { useMemoryTmpdir } from "./memoryTmpdir.js"
import postgres from "./pgGlobalSetup.js"

type Teardown = (() => Promise<void>) | undefined

export default async function setup(project: TestProject) {
  // First: the cluster, the profiles and every worker's temporary files go there.
  const removeTmpdir = useMemoryTmpdir()
  const started = await Promise.allSettled<Teardown>([postgres(project), builtAndChromium(project)])
  const teardowns = started.flatMap((s) => (s.status === "fulfilled" && s.value !== undefined ? [s.value] : []))
  const teardown = async () => {
    await Promise.allSettled(teardowns.map((t) => t()))
    removeTmpdir?.()
  }
  const failed = started.find((s): s is PromiseRejectedResult => s.status === "rejected")
  if (failed !== undefined) {
    await teardown()
    throw failed.reason
  }
  return teardown
}
