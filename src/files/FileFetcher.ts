/**
 * The port that turns a `fileRef` into bytes. Providers are registered by name; each decodes
 * its own fields, so adding one is a new module and one line in the registry, never a DTO change.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Semaphore from "effect/Semaphore"
import type { FileRef } from "../api/dtos.js"
import { BadRequest, type PayloadTooLarge, ServiceUnavailable, type UpstreamError } from "../api/errors.js"
import { issueProblems } from "../api/issues.js"

export interface FetchedFile {
  readonly bytes: Uint8Array
  /** The name the source gives the file (URL path, Content-Disposition, basename), if any. */
  readonly fileName?: string | undefined
  /** The type the source claims (e.g. a remote Content-Type), used only when the name gives none. */
  readonly contentType?: string | undefined
}

export type FetchError = BadRequest | PayloadTooLarge | UpstreamError

export interface FileProvider<A = any> {
  readonly name: string
  /** The provider's fields, decoded from the caller's JSON (no services needed). */
  readonly fields: Schema.Codec<A, unknown>
  readonly fetch: (ref: A) => Effect.Effect<FetchedFile, FetchError>
}

export const provider = <A>(p: FileProvider<A>): FileProvider<A> => p

export interface FileFetcherService {
  readonly providers: ReadonlyArray<string>
  readonly fetch: (ref: FileRef) => Effect.Effect<FetchedFile, FetchError>
  /**
   * Runs an ingest of `ref` (its fetch and what holds the bytes after it: the persist) in one of
   * the fetch slots: the bytes the gateway fetches itself are not a request body, so the body
   * budget does not count them. Past the slots it waits, then fails with a 503 (Retry-After).
   * Providers whose bytes came in the request body (`inline_base64`) take no slot.
   */
  readonly withFetchSlot: <A, E, R>(ref: FileRef, self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | ServiceUnavailable, R>
}

/** Ingests that fetch at once (SVC_INGEST_FETCHES_AT_ONCE), and how long one waits for a slot. */
export interface FetchSlots {
  readonly atOnce: number
  readonly waitMs: number
}

export const DEFAULT_FETCH_SLOTS: FetchSlots = { atOnce: 4, waitMs: 10_000 }

/** Providers whose bytes arrive in the request body, already counted by the body budget. */
const IN_BODY = new Set(["inline_base64"])

export class FileFetcher extends Context.Service<FileFetcher, FileFetcherService>()("files/FileFetcher") {
  /** A fetcher over the given providers. */
  static readonly fromProviders = (
    providers: ReadonlyArray<FileProvider>,
    slots: FetchSlots = DEFAULT_FETCH_SLOTS
  ): FileFetcherService => {
    const semaphore = Semaphore.makeUnsafe(slots.atOnce)
    const busy = new ServiceUnavailable({
      message: `${slots.atOnce} ingests are fetching their files already (SVC_INGEST_FETCHES_AT_ONCE); retry shortly`
    })
    const byName = new Map(providers.map((p) => [p.name, {
      ...p,
      decode: Schema.decodeUnknownEffect(p.fields, { errors: "first", onExcessProperty: "error" })
    }]))
    const names = [...byName.keys()]
    return {
      providers: names,
      withFetchSlot: (ref, self) =>
        IN_BODY.has(ref.provider) ? self : Effect.flatMap(
          semaphore.take(1).pipe(Effect.timeoutOrElse({ duration: slots.waitMs, orElse: () => Effect.fail(busy) })),
          () => Effect.ensuring(self, semaphore.release(1))
        ),
      fetch: (ref) => {
        const p = byName.get(ref.provider)
        if (p === undefined) {
          return Effect.fail(
            new BadRequest({
              message: `fileRef.provider: unknown provider "${ref.provider}"; known providers: ${names.join(", ")}`
            })
          )
        }
        return p.decode(ref).pipe(
          Effect.mapError((e) =>
            new BadRequest({ message: `fileRef (${p.name}): ${formatIssue(e)}` })
          ),
          Effect.flatMap(p.fetch)
        )
      }
    }
  }

  static readonly layer = (providers: ReadonlyArray<FileProvider>) =>
    Layer.succeed(FileFetcher, FileFetcher.fromProviders(providers))
}

/** In the API's words (`is unexpected`, `is missing`, `Expected X, actual V`), as the 400s say. */
const formatIssue = (e: Schema.SchemaError): string =>
  issueProblems(e.issue)
    .map((i) => `${["fileRef", ...i.path.map(String)].join(".")}: ${i.message}`)
    .join("; ")
