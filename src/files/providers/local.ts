/**
 * `{provider: "local", path}`: a file on the gateway's own host, confined to `SVC_LOCAL_INGEST_ROOT`.
 *
 * - Off unless a root is configured (400).
 * - The path must be absolute and free of NUL bytes (400).
 * - Before the filesystem is touched, the path (lexically normalized, so `../` is resolved) must lie
 *   under the root or under the root's realpath; nothing outside the root is probed, so a caller
 *   cannot learn which paths exist elsewhere (400).
 * - The path is then resolved with realpath and must still be inside realpath(root): symlinks that
 *   lead out of the root are refused (400).
 * - Regular files only: directories, FIFOs, sockets and devices are refused (400). The file is
 *   opened with O_NOFOLLOW | O_NONBLOCK (a FIFO swapped in cannot block the read) and checked
 *   again with fstat on the open handle.
 * - The checks above name the path; between them and the open, a directory on the way can be
 *   swapped for a symbolic link out of the root (O_NOFOLLOW guards only the last component). So
 *   the decision is taken again on the open descriptor: the path the kernel holds for it
 *   (/proc/self/fd/<fd>) must lie under realpath(root), else the same 400 as a symlink escape.
 *   Where /proc/self/fd is not available (not Linux) the provider refuses rather than guess.
 * - Over `SVC_INGEST_MAX_BYTES`: 413 Payload Too Large. The read is bounded, so a file that grows
 *   after the size check is never read past the cap.
 * - fileName: the basename of the path the caller gave.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { constants as fsConstants } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { BadRequest, PayloadTooLarge } from "../../api/errors.js"
import { provider } from "../FileFetcher.js"
import type { IngestConfigShape } from "../IngestConfig.js"

const ESCAPE = "resolves outside the local ingest root (symbolic link escapes are refused)"

const bad = (message: string) => new BadRequest({ message: `fileRef.path: ${message}` })

/** `child` equals `parent` or lies under it (both absolute and normalized). */
const within = (parent: string, child: string): boolean => {
  const rel = path.relative(parent, child)
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel))
}

const describeFsError = (e: unknown): string => {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  switch (code) {
    case "ENOENT":
      return "no such file"
    case "ENOTDIR":
      return "a component of the path is not a directory"
    case "EACCES":
    case "EPERM":
      return "permission denied"
    case "ELOOP":
      return "too many symbolic links (or a symbolic link was swapped in)"
    case "EISDIR":
      return "not a regular file (a directory)"
    default:
      return `cannot be read (${code ?? String(e)})`
  }
}

const kindOf = (st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string =>
  st.isDirectory() ? "a directory" : st.isFIFO() ? "a FIFO" : st.isSocket() ? "a socket" : "a device or special file"

const tooLarge = (size: number, cap: number) =>
  new PayloadTooLarge({ message: `fileRef.path: file is ${size} bytes, over the ${cap}-byte ingest limit` })

/** Reads at most `limit` bytes from the handle (the stat'ed size), never more. */
const readBounded = async (handle: fs.FileHandle, limit: number): Promise<Uint8Array> => {
  const buf = Buffer.alloc(limit)
  let filled = 0
  while (filled < limit) {
    const { bytesRead } = await handle.read(buf, filled, limit - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return filled === limit ? buf : buf.subarray(0, filled)
}

export const LocalRef = Schema.Struct({
  provider: Schema.Literal("local"),
  path: Schema.String.check(Schema.isMinLength(1))
})

export const localProvider = (config: IngestConfigShape) =>
  provider({
    name: "local",
    fields: LocalRef,
    fetch: (ref) =>
      Effect.gen(function*() {
        if (Option.isNone(config.localRoot)) {
          return yield* new BadRequest({
            message: "local provider is disabled: set SVC_LOCAL_INGEST_ROOT"
          })
        }
        const root = path.resolve(config.localRoot.value)
        const requested = ref.path
        if (requested.includes("\0")) return yield* bad("must not contain NUL bytes")
        if (!path.isAbsolute(requested)) return yield* bad("must be an absolute path")

        const realRoot = yield* Effect.tryPromise({
          try: () => fs.realpath(root),
          // The operator's setting is wrong; the caller learns only that the provider cannot serve.
          catch: () => new BadRequest({ message: "local provider is unavailable: SVC_LOCAL_INGEST_ROOT cannot be resolved" })
        })

        // Lexical confinement first: `..` segments are resolved here and nothing outside is probed.
        const lexical = path.resolve(requested)
        if (!within(root, lexical) && !within(realRoot, lexical)) {
          return yield* bad("outside the local ingest root (../ escapes are refused)")
        }

        const real = yield* Effect.tryPromise({
          try: () => fs.realpath(lexical),
          catch: (e) => bad(describeFsError(e))
        })
        if (!within(realRoot, real)) return yield* bad(ESCAPE)

        const st = yield* Effect.tryPromise({ try: () => fs.stat(real), catch: (e) => bad(describeFsError(e)) })
        if (!st.isFile()) return yield* bad(`not a regular file (${kindOf(st)})`)
        if (st.size > config.maxBytes) return yield* tooLarge(st.size, config.maxBytes)

        const bytes = yield* Effect.acquireUseRelease(
          Effect.tryPromise({
            // `real` has no symlinks left; O_NOFOLLOW refuses one swapped in for the last component.
            try: () => fs.open(real, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK),
            catch: (e) => bad(describeFsError(e))
          }),
          (handle) =>
            Effect.gen(function*() {
              const opened = yield* Effect.tryPromise({
                try: () => fs.readlink(`/proc/self/fd/${handle.fd}`),
                catch: () =>
                  new BadRequest({
                    message: "local provider is unavailable: the opened file cannot be verified (needs /proc/self/fd, Linux)"
                  })
              })
              if (!within(realRoot, opened)) return yield* bad(ESCAPE)
              const st2 = yield* Effect.tryPromise({ try: () => handle.stat(), catch: (e) => bad(describeFsError(e)) })
              if (!st2.isFile()) return yield* bad(`not a regular file (${kindOf(st2)})`)
              if (st2.size > config.maxBytes) return yield* tooLarge(st2.size, config.maxBytes)
              return yield* Effect.tryPromise({
                try: () => readBounded(handle, st2.size),
                catch: (e) => bad(describeFsError(e))
              })
            }),
          (handle) => Effect.promise(() => handle.close().catch(() => undefined))
        )

        const fileName = path.basename(requested)
        return { bytes, ...(fileName === "" ? {} : { fileName }) }
      })
  })
