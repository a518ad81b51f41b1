/**
 * Runs a `svc` command line inside the test process (no node start-up per case): what it writes
 * to stdout and stderr, and its exit code. For command lines that fail before anything is sent.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeServices from "@effect/platform-node/NodeServices"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { runCli } from "../../src/cli/app.js"

export interface InProcessRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** One at a time: stdout and stderr are the process's own, taken over while it runs. */
let queue: Promise<unknown> = Promise.resolve()

export const runInProcess = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<InProcessRun> => {
  const run = queue.then(async () => {
    let stdout = ""
    let stderr = ""
    const out = process.stdout.write
    const err = process.stderr.write
    process.stdout.write = ((chunk: string | Uint8Array) => ((stdout += String(chunk)), true)) as typeof process.stdout.write
    process.stderr.write = ((chunk: string | Uint8Array) => ((stderr += String(chunk)), true)) as typeof process.stderr.write
    try {
      const code = await Effect.runPromise(
        runCli(args).pipe(
          Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromUnknown(env)),
          Effect.provide(Layer.merge(NodeServices.layer, NodeHttpClient.layerNodeHttp))
        )
      )
      return { code, stdout, stderr }
    } finally {
      process.stdout.write = out
      process.stderr.write = err
    }
  })
  queue = run.catch(() => undefined)
  return run
}
