/**
 * Settings only the embedded workspace reads (its store, its relay, its links and webhooks): a
 * gateway started with SVC_WORKSPACE_URL runs none of it, so these were ignored without a word
 * (`SVC_PUBLIC_URL=javascript:alert(1)` started). Set them on the workspace service instead.
 */
import { SETTINGS, type SettingName } from "./settings.js"

/** The embedded store's own sections, and the two server settings only it reads. */
const SERVER_SETTINGS_OF_THE_STORE: ReadonlyArray<SettingName> = ["SVC_PUBLIC_URL", "SVC_LINK_SIGNING_KEYS"]

const EMBEDDED_ONLY: ReadonlyArray<string> = [
  ...SETTINGS.filter((s) => s.section === "embedded" || s.section === "webhooks").map((s) => s.name),
  ...SERVER_SETTINGS_OF_THE_STORE
]

/** One warning per setting in `env` that a gateway over a workspace service does not read. */
export const ignoredWithWorkspaceService = (env: Record<string, string | undefined> = process.env): Array<string> =>
  EMBEDDED_ONLY
    .filter((name) => env[name] !== undefined)
    .sort()
    .map((name) =>
      `${name} is read by the embedded workspace only and is ignored with SVC_WORKSPACE_URL: set it on the workspace service`
    )
