/**
 * `Config.all` for a record of settings, but reporting every bad one: Effect 4's `Config.all`
 * stops at the first failure, and a start that fails should list all that need fixing
 * (src/config/settingErrors.ts words one line per problem). Each setting is read with the fiber's
 * ConfigProvider, as yielding a Config does.
 */
import * as Arr from "effect/Array"
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

type Values<R extends Record<string, Config.Config<unknown>>> = {
  -readonly [K in keyof R]: R[K] extends Config.Config<infer A> ? A : never
}

export const allSettings = <R extends Record<string, Config.Config<unknown>>>(settings: R): Config.Config<Values<R>> =>
  Config.succeed(undefined).pipe(
    Config.mapEffect(() =>
      Effect.gen(function*() {
        const provider = yield* ConfigProvider.ConfigProvider
        const values: Record<string, unknown> = {}
        const issues: Array<SchemaIssue.Issue> = []
        for (const [key, setting] of Object.entries(settings)) {
          const result = yield* Effect.result(setting.parse(provider))
          if (result._tag === "Success") values[key] = result.success
          // A provider that cannot be read at all is not a bad setting: it ends the read.
          else if (Schema.isSchemaError(result.failure.cause)) issues.push(result.failure.cause.issue)
          else return yield* Effect.fail(result.failure)
        }
        if (Arr.isArrayNonEmpty(issues)) {
          const issue = issues.length === 1 ? issues[0] : new SchemaIssue.Composite(Schema.Unknown.ast, issues)
          return yield* Effect.fail(new Config.ConfigError(new Schema.SchemaError(issue)))
        }
        // Every key of `settings` was read into `values` with its setting's type.
        return values as Values<R>
      })
    )
  )
