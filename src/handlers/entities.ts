import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { GatewayApi } from "../api/Api.js"
import { createTask, listEntities, listEntityWorkflows, listTaskSummaries } from "../services/entities.js"

/** The rules live in ../services/entities.ts, shared with the agent tool server (src/mcp). */
export const EntitiesLive = HttpApiBuilder.group(GatewayApi, "entities", (handlers) =>
  handlers
    .handle("listEntities", () => listEntities)
    .handle("listTasks", ({ path }) => listTaskSummaries(path.entityId))
    .handle("listWorkflows", ({ path }) => listEntityWorkflows(path.entityId))
    .handle("createTask", ({ path, payload }) => createTask(path.entityId, payload)))
