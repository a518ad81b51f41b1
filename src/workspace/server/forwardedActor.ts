/**
 * The actor the gateway names on a call to the workspace API (`x-svc-actor`, sent by the HTTP
 * workspace client, src/workspace/http/client.ts): the handlers run on their behalf
 * (`withActor`), with the edge's groups and assignment enforcement (`x-svc-identity`), so the store records them with the write. The listener that serves this API
 * is the admin one (admin token, loopback by default): whoever can call it is trusted to name
 * the actor, as the gateway is. A malformed value answers 400 naming the header.
 */
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import { ACTOR_FORWARD_HEADER, IDENTITY_FORWARD_HEADER, withActor, withIdentity } from "../../services/Actor.js"
import { actorProblem, decodeActorHeader, decodeIdentityHeader } from "../../services/actorValue.js"
import { errorResponse } from "../../http/errors/errorBody.js"

export const forwardedActor = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
    const identityWire = request.headers[IDENTITY_FORWARD_HEADER]
    const identity = identityWire === undefined ? undefined : decodeIdentityHeader(identityWire)
    if (identityWire !== undefined && identity === undefined) {
      return Effect.succeed(errorResponse(400, "Bad Request", `Header ${IDENTITY_FORWARD_HEADER}: not the groups and enforcement the gateway sends`))
    }
    // A new effect per request: `app` itself is shared by every request.
    const served = identity === undefined ? app : withIdentity(identity)(app)
    const wire = request.headers[ACTOR_FORWARD_HEADER]
    if (wire === undefined) return served
    const actor = decodeActorHeader(wire)
    // Agents (`agent:<uuid>`) are named by the gateway's tool server: allowed here.
    const problem = actor === undefined ? "is not percent-encoded UTF-8" : actorProblem(actor, { agentAllowed: true })
    if (problem !== undefined) {
      return Effect.succeed(errorResponse(400, "Bad Request", `Header ${ACTOR_FORWARD_HEADER}: the actor ${problem}`))
    }
    return withActor(actor)(served)
  })
