/**
 * When a request arrived: stamped by the Node server as it emits the request (its headers just
 * read), before any fiber runs for it. The request's context carries it
 * (src/observability/requestContext.ts), and a decision binds to the step current then
 * (src/domain/engine.ts acceptSignal): two requests read from their sockets in one turn of
 * the event loop are both stamped before either is handled.
 */
import type * as http from "node:http"
import { preciseNowMs } from "../../lib/preciseClock.js"

/** A property of the request (a WeakMap entry per request cost more under load). */
const ARRIVAL = Symbol("arrivedAt")
type Stamped = http.IncomingMessage & { [ARRIVAL]?: number }

export const stampArrival = (req: http.IncomingMessage): void => {
  ;(req as Stamped)[ARRIVAL] = preciseNowMs()
}

/** The stamp, or undefined for a request that did not come through the stamping server. */
export const arrivalOf = (req: http.IncomingMessage | undefined): number | undefined =>
  req == null ? undefined : (req as Stamped)[ARRIVAL]
