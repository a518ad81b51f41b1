import { appendFileSync } from "node:fs"

let out

export async function initialize(data) {
  out = data.out
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context)
  if (out !== undefined) appendFileSync(out, `${result.url}\n`)
  return result
}
