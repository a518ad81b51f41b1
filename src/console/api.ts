/**
 * The console's only way to the gateway's /v1: the typed client derived from GatewayApi
 * (src/client). Same origin, so every call goes to this gateway and no other.
 */
import { createGatewayClient, type PromiseClient, type GatewayClient, type RawUploadRequest, type UploadResult, uploadFileRawWithFetch } from "../client/index.js"
import { xhrFetch } from "./xhrFetch.js"

/**
 * Where the page was served, without its hash: the gateway's root, or the path prefix a reverse
 * proxy puts it under (SVC_PUBLIC_URL=https://example.com/acme hands out `.../acme/#/tasks/...`).
 * Calls, assets and links are made relative to it, never to the origin's root.
 */
export const consoleBase = new URL(".", location.href).href.replace(/\/+$/, "")

/** A root-relative path the API answers with (a download URL) under the console's base. */
export const underBase = (path: string) => (path.startsWith("/") && !path.startsWith("//") ? consoleBase + path : path)

export const gw: PromiseClient<GatewayClient> = createGatewayClient(consoleBase)

/** A file sent as its own bytes (the raw upload), reporting upload progress. */
export const uploadRaw = (request: RawUploadRequest, onProgress: (fraction: number) => void): Promise<UploadResult> =>
  uploadFileRawWithFetch(consoleBase, request, { fetch: xhrFetch(onProgress) })

/** The message of a failure from the client: the error shape's `message`, else a transport description. */
export const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const e = error as { message?: unknown; _tag?: unknown; reason?: { _tag?: unknown } }
    // Effect 4's HttpClientError says what went wrong in its reason's tag.
    const reason = e._tag === "HttpClientError" ? e.reason?._tag : undefined
    if (reason === "TransportError" || reason === "InvalidUrlError" || reason === "EncodeError") {
      return "The gateway could not be reached"
    }
    // An answer not in the gateway's shape (a proxy's 502 page, an empty 504): said in words, with
    // its status when the decoder names one, never the decoder's own account of the mismatch.
    if (e._tag === "SchemaError" || e._tag === "HttpClientError") {
      const status = statusOf(error) ?? Number(/statusCode: (\d{3})/.exec(String(e.message))?.[1] ?? NaN)
      return Number.isFinite(status) && status >= 400
        ? `The gateway answered with an error (HTTP ${status}) and no explanation; it may be restarting or unreachable behind its proxy. Try again in a moment`
        : "The gateway's answer could not be read. Try again in a moment"
    }
    if (typeof e.message === "string" && e.message !== "") return e.message
  }
  return String(error)
}

/** The HTTP status a failure came with, when it has one. */
export const statusOf = (error: unknown): number | undefined => {
  const e = error as { statusCode?: unknown; response?: { status?: unknown } } | null
  if (typeof e?.statusCode === "number") return e.statusCode
  if (typeof e?.response?.status === "number") return e.response.status
  return undefined
}

/**
 * The field a server message names, by the gateway's conventions: `context.<key>: ...` (start
 * parameters), `value for <field>: ...` and `Field "<field>" ...` (row edits), `payload.<key>`
 * or a bare `<key>: ...` (request decoding).
 */
export const fieldOfMessage = (message: string): string | undefined => {
  const m = /^(?:context|payload)\.([A-Za-z0-9_$-]+)/.exec(message) ??
    /^value for ([A-Za-z0-9_$-]+):/.exec(message) ??
    /^Field "([^"]+)"/.exec(message) ??
    /^([A-Za-z][A-Za-z0-9_]*): /.exec(message) ??
    /\["([A-Za-z0-9_]+)"\]/.exec(message)
  return m?.[1]
}
