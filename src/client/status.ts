/** Task statuses a client reasons about (spec §3): COMPLETED and FAILED are terminal. */
export const TERMINAL_STATUSES: ReadonlyArray<string> = ["COMPLETED", "FAILED"]

export const isTerminalStatus = (status: string): boolean => TERMINAL_STATUSES.includes(status)
