import * as Config from "effect/Config"
import * as Option from "effect/Option"

/**
 * An optional setting for which an empty value (`NAME=`) means unset, as Effect 3's
 * `Config.nonEmptyString` made it. The process reads the environment keeping empty values
 * (`preserveEmptyStrings`, main.ts) so that settings with a default refuse `NAME=` instead of
 * taking the default; these few optional ones keep their documented "empty is unset".
 */
export const unsetWhenEmpty = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(Config.map(Option.filter((value) => value !== "")))
