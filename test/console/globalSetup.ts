/**
 * Vitest global set-up: builds the task console into dist/console when it is stale, once per
 * run, before any test starts a gateway that serves it (a few stat calls when it is fresh).
 */
import { buildConsole } from "../../scripts/build-console.mjs"
import { consoleStaleness } from "../../scripts/build-if-stale.mjs"

export default async () => {
  const why = consoleStaleness()
  if (why !== undefined) await buildConsole()
}
