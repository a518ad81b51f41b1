/**
 * When a request arrived: stamped by the Node server as it emits the request (its headers just
 * read), before any fiber runs for it. The request's context carries it
 * (src/observability/requestContext.ts), and a decision binds to the step current then
 * (src/domain/engine.ts acceptSignal): two requests read from their sockets in one turn of
 * the event loop are both stamped before either is handled.
 */
import type * as http from "node:http"
import { preciseNowMs } from "../../lib/preciseClock.js"

// A property of the request rather than a WeakMap entry: every request would otherwise add an
// entry to a weak table, which the garbage collector walks on every collection.
const ARRIVAL = Symbol("arrival")

type Stamped = http.IncomingMessage & { [ARRIVAL]?: number }

export const stampArrival = (req: http.IncomingMessage): void => {
  ;(req as Stamped)[ARRIVAL] = preciseNowMs()
}

/** The stamp, or undefined for a request that did not come through the stamping server. */
export const arrivalOf = (req: http.IncomingMessage): number | undefined => (req as Stamped)[ARRIVAL]
