import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { provider } from "../FileFetcher.js"
import { decodeBase64 } from "../base64.js"

/** `{provider: "inline_base64", data}`: the bytes travel in the request. */
export const inlineBase64 = provider({
  name: "inline_base64",
  fields: Schema.Struct({ provider: Schema.Literal("inline_base64"), data: Schema.String }),
  fetch: (ref) => Effect.map(decodeBase64("fileRef.data", ref.data), (bytes) => ({ bytes }))
})
