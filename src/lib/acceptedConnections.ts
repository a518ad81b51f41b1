/**
 * Connections this process's listeners have accepted, counted. Node's libuv accepts one waiting
 * connection per turn of the event loop (its uv__server_io takes one per poll callback: strace of
 * Node 24 reads one accept4 per epoll_pwait, never an EAGAIN) and reads its first request on a
 * later turn: twenty connections opened and written at once were stamped
 * (src/http/server/arrival.ts) one per turn, 0.7-5 ms apart (each turn runs the previous
 * request's handler), so the last arrived 15-45 ms after the first. A step-bound write waits
 * until turns pass with none accepted (src/workspace/embedded/transaction.ts letArrivalsIn):
 * every request already waiting in the kernel is then stamped.
 */
let accepted = 0

/** Called by each listener as it accepts a connection (src/http/server/nodeServer.ts). */
export const noteAccepted = (): void => {
  accepted++
}

/** How many connections have been accepted so far. */
export const acceptedSoFar = (): number => accepted
