/**
 * When a request arrived: stamped by the Node server as it emits the request (its headers just
 * read), before any fiber runs for it. The request's context carries it
 * (src/observability/requestContext.ts), and a decision binds to the step current then
 * (src/domain/engine.ts acceptSignal): two requests read from their sockets in one turn of
 * the event loop are both stamped before either is handled.
 */
import type * as http from "node:http"
import { preciseNowMs } from "../../lib/preciseClock.js"

const arrivals = new WeakMap<http.IncomingMessage, number>()

export const stampArrival = (req: http.IncomingMessage): void => {
  arrivals.set(req, preciseNowMs())
}

/** The stamp, or undefined for a request that did not come through the stamping server. */
export const arrivalOf = (req: http.IncomingMessage): number | undefined => arrivals.get(req)
