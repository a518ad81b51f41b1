/**
 * S3's largest single cost: the strict-base64 check of src/files/base64.ts on a 1 MiB file
 * (1.4 MB of base64). Compares it with equivalent checks and with the decode itself.
 *
 * Usage: tsx bench/experiments/base64.ts
 */
import { randomBytes } from "node:crypto"

const STRICT_GROUPED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const FLAT = /^[A-Za-z0-9+/]*={0,2}$/
/** Same language as STRICT_GROUPED: alphabet only, `=` padding at the end only, length a multiple of 4. */
const flatCheck = (s: string) => s.length % 4 === 0 && FLAT.test(s)

const data = randomBytes(1024 * 1024).toString("base64")
const samples = ["", "QQ==", "QUI=", "QUJD", "QUJDRA==", "Q===", "QQ=", "QUJ", "QU=D", "QUJD\n", "QUJ-", "QUJ_", "====", "QQ==QUJD", data, `${data}=`, data.slice(1)]
for (const s of samples) {
  if (STRICT_GROUPED.test(s) !== flatCheck(s)) throw new Error(`checks disagree on ${JSON.stringify(s.slice(0, 20))}`)
}

const time = (name: string, f: () => unknown, n = 50) => {
  f()
  const t0 = performance.now()
  for (let i = 0; i < n; i++) f()
  console.log(`${name.padEnd(44)} ${((performance.now() - t0) / n).toFixed(2).padStart(7)} ms per 1 MiB file`)
}
time("grouped regex (src/files/base64.ts)", () => STRICT_GROUPED.test(data))
time("length % 4 + flat character-class regex", () => flatCheck(data))
time("Buffer.from(data, \"base64\") (the decode)", () => Buffer.from(data, "base64"))
time("JSON.parse of the upload body", () => JSON.parse(JSON.stringify({ source: "bench", data })), 20)
