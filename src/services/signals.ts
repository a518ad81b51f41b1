import * as Option from "effect/Option"
import type { Workspace } from "../upstream/WorkspaceClient.js"

/** The signal a write asks for: both signalTaskId and signalName, or none; bound to `expectedStep` when given. */
export const signalFrom = (
  dto: { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined },
  payload: Record<string, unknown>,
  expectedStep?: string | undefined
): Option.Option<Workspace.Signal> =>
  dto.signalTaskId !== undefined && dto.signalName !== undefined
    ? Option.some({ taskId: dto.signalTaskId, name: dto.signalName, payload, ...(expectedStep !== undefined ? { expectedStep } : {}) })
    : Option.none()
