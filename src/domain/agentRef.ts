/**
 * An agent's external reference: `<kind>://<native-id>`, from either a bare native id or a URI
 * whose scheme is the kind. Shared by the registry (src/workspace/embedded/agents.ts), the fixture loader and
 * the in-memory workspace.
 */
import * as Effect from "effect/Effect"
import { BadRequest } from "../api/errors.js"
import { charCount } from "../api/textLength.js"

const KIND = /^[a-z][a-z0-9+.-]{0,31}$/
const REF = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/

const bad = (message: string) => Effect.fail(new BadRequest({ message }))

/** `<kind>://<native-id>` from either a bare native id or a URI whose scheme is the kind. */
export const resolveExternalRef = (kind: string, ref: string): Effect.Effect<string, BadRequest> => {
  if (!KIND.test(kind)) return bad("kind: must be a lowercase URI scheme such as claude or openai")
  const m = REF.exec(ref.trim())
  if (m !== null && m[1]!.toLowerCase() !== kind) return bad(`externalRef: scheme "${m[1]}" does not match kind "${kind}"`)
  const native = m !== null ? m[2]! : ref.trim()
  if (native === "" || charCount(native) > 512 || /\s/.test(native)) return bad("externalRef: native id must be 1-512 characters without spaces")
  return Effect.succeed(`${kind}://${native}`)
}

