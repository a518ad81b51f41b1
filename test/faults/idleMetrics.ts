/**
 * A built process's /metrics read once it has been idle long enough to run its full collection
 * (the idle collection npm start's `--expose-gc` enables, src/http/server/nodeServer.ts): no
 * request for `idleMs` (SVC_IDLE_COLLECT_MS) and `marginMs` more (the server looks every quarter
 * of it), then one scrape. Returns a reader of its gauges.
 */
export const afterIdleCollection = async (url: string, idleMs: number, marginMs: number): Promise<(name: string) => number> => {
  await new Promise((r) => setTimeout(r, idleMs + marginMs))
  const text = await (await fetch(`${url}/metrics`)).text()
  return (name) => {
    const m = new RegExp(`^${name} (\\S+)$`, "m").exec(text)
    if (m === null) throw new Error(`no ${name} in /metrics`)
    return Number(m[1])
  }
}
