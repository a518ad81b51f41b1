/**
 * Keeps memory flat while bytes stream through. Every chunk a socket or a file read hands us is
 * a fresh buffer outside V8's heap, and V8 frees it only when a collection runs; code that moves
 * bytes allocates almost nothing on the heap itself, so none runs until external memory has grown
 * by V8's soft limit (two 256 MiB downloads: +71 MB RSS; 16 refused 64 MiB bodies: +37 MB;
 * bench/PROFILE.md). With `--expose-gc` (npm start), a young-generation collection after every
 * `every` bytes that died frees them: about 0.06 ms each.
 */
type Collect = (options: { readonly type: "minor" }) => void

/** Counts bytes that died; past `every`, collects the young generation. Without `collect`, nothing. */
export const makeBufferRelease = (collect: Collect | undefined, every: number) => {
  let unreleased = 0
  return (bytes: number): void => {
    if (collect === undefined) return
    unreleased += bytes
    if (unreleased >= every) {
      unreleased = 0
      collect({ type: "minor" })
    }
  }
}

/** `gc` exists only under --expose-gc. */
const collector = (globalThis as { gc?: Collect }).gc

/**
 * Request body chunks once copied, spooled, refused or discarded: one process-wide count, every
 * 4 MiB (a chunk is 64 KiB: one collection per 64 chunks, whichever requests read them).
 */
export const BODY_RELEASE_EVERY_BYTES = 4 * 1024 * 1024
export const bodyBytesDone = makeBufferRelease(collector, BODY_RELEASE_EVERY_BYTES)

/** Download chunks once written (256 KiB each): every 16 MiB. */
export const DOWNLOAD_RELEASE_EVERY_BYTES = 16 * 1024 * 1024
export const downloadBytesDone = makeBufferRelease(collector, DOWNLOAD_RELEASE_EVERY_BYTES)
