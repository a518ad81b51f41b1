/**
 * Readers of declared settings (./settings.ts): the default and bounds come from the declaration,
 * and a bad value fails naming the setting, its value and what it takes.
 */
import * as Config from "effect/Config"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { defaultOf, setting, type SettingName } from "./settings.js"

/**
 * A whole number setting, at least `min`. A bad value fails naming the setting, its value and
 * what it takes (src/config/settingErrors.ts): `SVC_DB_POOL_SIZE="abc": expected a
 * positive integer`, not a bare "Expected an integer value".
 */
const expectedInt = (min: number, max: number) =>
  max < Number.MAX_SAFE_INTEGER
    ? `expected an integer from ${min} to ${max}`
    : min === 1
    ? "expected a positive integer"
    : min === 0
    ? "expected 0 or a positive integer"
    : `expected an integer of at least ${min}`

/** Decimal digits (blanks around allowed) naming a safe integer from `min` to `max`, as a number. */
export const intText = (min: number, max: number = Number.MAX_SAFE_INTEGER) =>
  Schema.String.check(
    Schema.makeFilter((text) => {
      const n = Number(text)
      return (/^\s*\d+\s*$/.test(text) && Number.isSafeInteger(n) && n >= min && n <= max) || expectedInt(min, max)
    })
  ).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString))

/**
 * The integer setting `name` with its declared default and bounds (a declared maximum too: without
 * it a figure past the bound was taken as it came); `fallback` only where the default follows
 * another setting (the declaration has none).
 */
export const intSetting = (name: SettingName, fallback: number = defaultOf(name), min: number = setting(name).min ?? 1) =>
  Config.schema(intText(min, setting(name).max), name).pipe(Config.withDefault(fallback))

/** The integer setting `name` without a default (undefined when unset), in its declared bounds. */
export const optionalIntSetting = (name: SettingName) =>
  Config.option(Config.schema(intText(setting(name).min ?? 1, setting(name).max), name)).pipe(
    Config.map(Option.getOrUndefined)
  )

/** What a base URL setting takes, said once for its message and the docs. */
export const BASE_URL_EXPECTED =
  "expected an http or https URL with a host and no credentials, query or fragment, e.g. https://gateway.example.com"

/**
 * A base URL setting (SVC_PUBLIC_URL, SVC_WORKSPACE_URL): paths are appended to it, so a query or
 * fragment would end up in the middle of every link and call (`https://gw/?a=1/links/...`), and
 * another scheme (`javascript:`) would be handed out in messages as a link. Its normalized form
 * without a trailing slash.
 */
export const baseUrlText = Schema.String.check(
  Schema.makeFilter((text) => {
    if (!URL.canParse(text)) return BASE_URL_EXPECTED
    const url = new URL(text)
    // A `?` or `#` with nothing after it parses to an empty search or hash: refused all the same.
    return ((url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" &&
      url.username === "" && url.password === "" && !/[?#]/.test(text)) || BASE_URL_EXPECTED
  })
).pipe(Schema.decodeTo(Schema.String, SchemaTransformation.transform({
  decode: (text) => new URL(text).href.replace(/\/+$/, ""),
  encode: (href) => href
})))

/** The base URL setting `name`, when set. */
export const optionalBaseUrlSetting = (name: "SVC_PUBLIC_URL" | "SVC_WORKSPACE_URL") =>
  Config.option(Config.schema(baseUrlText, name))
