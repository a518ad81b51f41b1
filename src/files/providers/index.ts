/**
 * The one place file providers are registered. Adding a provider is one new module in this
 * folder and one entry in the list below; IngestFileDto does not change.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DEFAULT_FETCH_SLOTS, FileFetcher } from "../FileFetcher.js"
import { IngestConfig, type IngestConfigShape } from "../IngestConfig.js"
import { inlineBase64 } from "./inlineBase64.js"
import { localProvider } from "./local.js"
import { urlProvider, type UrlProviderOptions } from "./url.js"

/** Every provider, configured; `options` is for tests (e.g. a stand-in DNS lookup for `url`). */
export const fileProviders = (config: IngestConfigShape, options: UrlProviderOptions = {}) => [
  inlineBase64,
  localProvider(config),
  urlProvider(config, options)
]

export const FileFetcherLive: Layer.Layer<FileFetcher, never, IngestConfig> = Layer.effect(
  FileFetcher,
  Effect.map(IngestConfig, (config) =>
    FileFetcher.fromProviders(fileProviders(config), { atOnce: config.fetchesAtOnce, waitMs: DEFAULT_FETCH_SLOTS.waitMs }))
)
