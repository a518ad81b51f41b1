import * as ParsedPayload from "../http/input/parsedPayload.js"
import * as Effect from "effect/Effect"
import { GatewayApi } from "../api/Api.js"
import { claimTask, inboxPage, releaseTaskClaim, whoAmI } from "../services/inbox.js"

// Shared with the agent tool server and the CLI: ../services/inbox.ts.
export const InboxLive = ParsedPayload.group(GatewayApi, "inbox", (handlers) =>
  Effect.succeed(
    handlers
      .handle("getMe", () => whoAmI)
      .handle("getInbox", ({ query }) => inboxPage(query))
      .handle("claim", ({ params, payload }) => claimTask(params.taskId, payload.override === true))
      .handle("releaseClaim", ({ params }) => releaseTaskClaim(params.taskId))
  ))
