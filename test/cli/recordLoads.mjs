// Preload (`node --import ./recordLoads.mjs`) that appends the URL of every module the process
// resolves to the file named by RECORD_LOADS_FILE. Registered after tsx, so it sees final URLs.
import { register } from "node:module"

register("./recordLoadsHooks.mjs", import.meta.url, { data: { out: process.env.RECORD_LOADS_FILE } })
