/**
 * Keeps one of Node's `process.nextTick` objects alive for the life of the process.
 *
 * Node makes each tick an object literal with symbol keys, and V8 holds that literal's maps
 * (its hidden classes) only weakly: from the literal's feedback and the transitions between
 * them. Ticks die young, so full collections that find no tick alive free the maps, the next
 * tick builds new ones, and the literal's property-definition feedback, seeing a second map,
 * turns megamorphic for the rest of the process: every tick then takes runtime calls, 370-550
 * ns instead of 40. Node makes ten ticks per HTTP request (four endReadableNT, two
 * emitCloseNT, ...): 10-13% of a health check's CPU in the processes it struck (6 of 6 under
 * the bench's profiled S1; 0 of 3 with this). One tick object held keeps the maps, and so the
 * feedback, as they are (test/ops/tickObjectMaps.test.ts).
 */
import { executionAsyncResource } from "node:async_hooks"

let kept: object | undefined

// Inside a tick's callback the resource that runs is the tick object itself.
process.nextTick(() => {
  kept = executionAsyncResource()
})

/** The tick object held (undefined until the first ticks have run). */
export const keptTickObject = (): object | undefined => kept
