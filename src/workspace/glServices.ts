/**
 * The accounting services the local GL adapter can connect, by id. A connect session may
 * preselect one; an unknown id is refused with the list, at session creation and completion.
 */
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
