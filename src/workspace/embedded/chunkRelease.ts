/**
 * Keeps a download's memory flat. Every chunk a download reads is a fresh 256 KiB buffer outside
 * V8's heap, dead once written to the socket; but V8 frees such buffers only when a collection
 * runs, and a download allocates almost nothing on the heap itself, so none runs until external
 * memory has grown by V8's 64 MB soft limit (S4 measured +71 MB RSS while two 256 MiB downloads
 * ran; bench/PROFILE.md). With `--expose-gc` (npm start), a young-generation collection after
 * every 16 MiB read frees them: about 0.06 ms each, 16 per 256 MiB.
 */
type Collect = (options: { readonly type: "minor" }) => void

export const RELEASE_EVERY_BYTES = 16 * 1024 * 1024

/** Counts bytes read; past `every`, collects the young generation. Without `collect`, nothing. */
export const makeChunkRelease = (collect: Collect | undefined, every = RELEASE_EVERY_BYTES) => {
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

/** The process's counter, shared by all downloads (`gc` exists only under --expose-gc). */
export const chunkRead = makeChunkRelease((globalThis as { gc?: Collect }).gc)
