#!/usr/bin/env node
// The `svc` bin: registers tsx (resolved from this package, so it works from any directory)
// and runs the TypeScript entry point. Equivalent to `node --import tsx src/cli/main.ts`.
import { register } from "tsx/esm/api"

register()
await import("./main.ts")
