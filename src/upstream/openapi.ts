/** The workspace service's OpenAPI document, derived from WorkspaceApi alone. */
import * as OpenApi from "effect/http-api/OpenApi"
import { WorkspaceApi } from "./WorkspaceApi.js"

/** Where the repository keeps the published document (`npm run workspace:openapi` writes it). */
export const WORKSPACE_OPENAPI_FILE = "docs/workspace-openapi.json"

export const workspaceOpenApi = (): OpenApi.OpenAPISpec => OpenApi.fromApi(WorkspaceApi)

/** The document as the file holds it: two-space JSON with a trailing newline. */
export const workspaceOpenApiText = (): string => JSON.stringify(workspaceOpenApi(), null, 2) + "\n"
