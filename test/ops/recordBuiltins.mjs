// Preload (`node --import ./recordBuiltins.mjs`): on SIGUSR2, writes the Node builtins this
// process has loaded so far (process.moduleLoadList) to RECORD_BUILTINS_FILE.
import { renameSync, writeFileSync } from "node:fs"

const out = process.env.RECORD_BUILTINS_FILE
if (out !== undefined) {
  process.on("SIGUSR2", () => {
    // Written whole, then renamed: a reader never sees half a list.
    writeFileSync(`${out}.part`, process.moduleLoadList.join("\n") + "\n")
    renameSync(`${out}.part`, out)
  })
}
