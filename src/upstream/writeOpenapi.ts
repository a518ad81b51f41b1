/**
 * Writes the workspace service's OpenAPI document to docs/workspace-openapi.json (or the path
 * given as the first argument): `tsx src/upstream/writeOpenapi.ts [out.json]`.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { WORKSPACE_OPENAPI_FILE, workspaceOpenApiText } from "./openapi.js"

const out = resolve(process.argv[2] ?? WORKSPACE_OPENAPI_FILE)
await mkdir(dirname(out), { recursive: true })
await writeFile(out, workspaceOpenApiText())
console.log(`Wrote ${out}`)
