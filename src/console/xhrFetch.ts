/**
 * A fetch over XMLHttpRequest, for the typed client (createGatewayClient's `fetch` option):
 * XMLHttpRequest reports upload progress, fetch does not. Only what the Effect fetch client
 * uses: method, headers, a string or byte body, an abort signal; the answer as a Response.
 */
export const xhrFetch = (onProgress: (fraction: number) => void): typeof fetch =>
  (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const request = input instanceof Request ? input : undefined
      const url = request?.url ?? String(input)
      const xhr = new XMLHttpRequest()
      xhr.open(init?.method ?? request?.method ?? "GET", url)
      xhr.responseType = "arraybuffer"
      new Headers(init?.headers ?? request?.headers).forEach((value, key) => xhr.setRequestHeader(key, value))
      xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total)
      xhr.onload = () => {
        onProgress(1)
        const headers = new Headers()
        for (const line of xhr.getAllResponseHeaders().trim().split(/[\r\n]+/)) {
          const at = line.indexOf(":")
          if (at > 0) headers.append(line.slice(0, at).trim(), line.slice(at + 1).trim())
        }
        const empty = xhr.status === 204 || xhr.status === 304
        resolve(new Response(empty ? null : xhr.response as ArrayBuffer, { status: xhr.status, statusText: xhr.statusText, headers }))
      }
      xhr.onerror = () => reject(new TypeError("Network request failed"))
      xhr.onabort = () => reject(new DOMException("Aborted", "AbortError"))
      init?.signal?.addEventListener("abort", () => xhr.abort())
      xhr.send((init?.body ?? null) as XMLHttpRequestBodyInit | null)
    })
