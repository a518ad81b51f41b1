import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { BadRequest } from "../api/errors.js"
import { signalNameRefusal } from "../domain/signalNames.js"
import type { Workspace } from "../upstream/WorkspaceClient.js"

/** A 400 when the write's signal name is a step signal of another route (src/domain/signalNames.ts); the store's check too. */
export const requireSignalName = (name: string | undefined): Effect.Effect<void, BadRequest> => {
  const refusal = name === undefined ? undefined : signalNameRefusal(name)
  return refusal === undefined ? Effect.void : Effect.fail(new BadRequest({ message: refusal }))
}

/** The signal a write asks for: both signalTaskId and signalName, or none; bound to `expectedStep` when given. */
export const signalFrom = (
  dto: { readonly signalTaskId?: string | undefined; readonly signalName?: string | undefined },
  payload: Record<string, unknown>,
  expectedStep?: string | undefined
): Option.Option<Workspace.Signal> =>
  dto.signalTaskId !== undefined && dto.signalName !== undefined
    ? Option.some({ taskId: dto.signalTaskId, name: dto.signalName, payload, ...(expectedStep !== undefined ? { expectedStep } : {}) })
    : Option.none()
