import * as Layer from "effect/Layer"
import { WorkspaceClient } from "../../src/upstream/WorkspaceClient.js"
import { makeMemoryWorkspace } from "../../src/workspace/memory.js"
import { runWorkspaceContract } from "./contract.js"

runWorkspaceContract("in-memory", (fixture) => Layer.sync(WorkspaceClient, () => makeMemoryWorkspace(fixture)))
