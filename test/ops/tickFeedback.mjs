// Preload (`node --expose-gc --allow-natives-syntax --import ./tickFeedback.mjs`): on SIGUSR2,
// runs full collections with no tick object of its own alive (ticks in between, some inside an
// AsyncLocalStorage frame, as the server's are), then prints V8's feedback of process.nextTick
// (its tick literal's property definitions: MONOMORPHIC or MEGAMORPHIC), several times over,
// and TICK-FEEDBACK-DONE.
import { AsyncLocalStorage } from "node:async_hooks"

const als = new AsyncLocalStorage()
const noop = () => {}
const turn = () => new Promise((resolve) => setImmediate(resolve))
const ticks = (n) => {
  for (let i = 0; i < n; i++) process.nextTick(noop)
  return turn()
}
const printFeedback = new Function("%DebugPrint(process.nextTick)")

process.on("SIGUSR2", async () => {
  for (let i = 0; i < 5; i++) {
    await turn()
    globalThis.gc()
    await als.run({ i }, () => ticks(1000))
    await ticks(1000)
  }
  printFeedback()
  // V8 prints through C's stdio, which holds up to 4 KB of a pipe's output until more comes
  // (not flushed at exit either): the same print again pushes the first one out whole.
  for (let i = 0; i < 4; i++) printFeedback()
  process.stdout.write("TICK-FEEDBACK-DONE\n")
})
