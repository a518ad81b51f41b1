/**
 * The accounting services the local GL adapter can connect, by id. A connect session may
 * preselect one; an unknown id is refused with the list, at session creation and completion.
 */
import { defaultOf } from "../config/settings.js"

export const GL_SERVICES = [
  ["quickbooks_online", "QuickBooks Online"],
  ["xero", "Xero"],
  ["netsuite", "NetSuite"],
  ["sage_intacct", "Sage Intacct"]
] as const

export const GL_SERVICE_IDS: ReadonlyArray<string> = GL_SERVICES.map(([id]) => id)

/** The 400 message for an id that is not a known service, or undefined when it is known. */
export const unknownGlService = (serviceId: string): string | undefined =>
  GL_SERVICE_IDS.includes(serviceId)
    ? undefined
    : `serviceId: unknown service ${JSON.stringify(serviceId.length > 64 ? `${serviceId.slice(0, 64)}…` : serviceId)}; known services: ${GL_SERVICE_IDS.join(", ")}`

/** SVC_GL_SESSION_TTL_MS's default: a person has 15 minutes to pick a service and authorize it. */
export const DEFAULT_GL_SESSION_TTL_MS = defaultOf("SVC_GL_SESSION_TTL_MS")

/** The created_at (ISO text) a connect session needs, now, to be still open. */
export const glSessionCutoff = (ttlMs: number): string => new Date(Math.max(0, Date.now() - ttlMs)).toISOString()
