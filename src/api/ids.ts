import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { textProblem } from "./jsonValue.js"
import { utf8Length } from "./textLength.js"

// Written without the `i` flag so that the published JSON Schema pattern means the same; with `u`,
// which Effect 4 requires to publish a pattern (JSON Schema patterns are Unicode-aware).
const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/u

/** A UUID in any version, case-insensitive (ids come from several systems). */
export const Uuid = Schema.String.annotate({ description: "UUID", format: "uuid" }).check(
  Schema.isPattern(UUID_RE, { message: "must be a UUID" })
).annotate({ identifier: "Uuid" })

export const isUuid = (s: string): boolean => UUID_RE.test(s)

/**
 * The longest task id accepted, composite ids included (they nest, so they grow). The router
 * routes path parameters up to MAX_PATH_PARAM_LENGTH (src/http/server/ServerLimits.ts), above this, so
 * a longer id reaches this schema and answers 400 naming `taskId` instead of a routing 404.
 */
export const TASK_ID_MAX_LENGTH = 2048

/**
 * The same bound in UTF-8 bytes: the gateway puts task ids in the workspace service's paths,
 * percent-encoded (3 characters a byte), and 2,048 CJK characters made an 18 KiB path that the
 * service refused with 431 (the gateway's 502). 2,048 bytes are at most 6 KiB in a path.
 */
export const TASK_ID_MAX_BYTES = 2048

/** A UUID, then `:<step>:<slug>` pairs of non-empty segments (child ids nest). */
const TASK_ID_RE = new RegExp(`^${UUID_RE.source.slice(1, -1)}(?::[^:]+:[^:]+)*$`, "u")

/**
 * The bounds in characters and UTF-8 bytes, and text the store keeps (a NUL in a path's composite
 * id, `%00`, was stored cut at it, naming another child), in one check: every answer's and every
 * board's task ids pass it (50 ids decoded and encoded: 25-27 us with three checks before the
 * pattern, 23-24 with this one, 21-23 with the length alone).
 * Aborting: a too-long id is that one problem, not also a pattern mismatch (as on Effect 3).
 */
const taskIdBounds = Schema.makeFilter(
  (s: string) =>
    // A plain UUID's 36 characters: the pattern decides (hex digits and dashes hold no NUL).
    s.length === 36
      ? true
      : s.length > TASK_ID_MAX_LENGTH
      ? `must be at most ${TASK_ID_MAX_LENGTH} characters`
      : s.length > TASK_ID_MAX_BYTES / 4 && utf8Length(s) > TASK_ID_MAX_BYTES
      ? `must be at most ${TASK_ID_MAX_BYTES} bytes in UTF-8`
      : textProblem(s) ?? true,
  {
    expected: `a value with a length of at most ${TASK_ID_MAX_LENGTH}`,
    toJsonSchema: () => ({ maxLength: TASK_ID_MAX_LENGTH }),
    arbitraryConstraint: { maxLength: TASK_ID_MAX_LENGTH }
  }
).abort()

/** A task UUID, or a child workflow's composite `<parent_task_id>:<step>:<slug>`. */
export const TaskId = Schema.String.check(
  taskIdBounds,
  Schema.isPattern(TASK_ID_RE, { message: "must be a task UUID or a composite <uuid>:<step>:<slug>" })
).annotate({
  identifier: "TaskId",
  description:
    `Workspace task UUID, or for a child workflow the composite \`<parent_task_id>:<step>:<slug>\` (nesting allowed), at most ${TASK_ID_MAX_LENGTH} characters and ${TASK_ID_MAX_BYTES} bytes in UTF-8`
})

/**
 * Ids a client sends (path parameters, query parameters, body fields): their UUID in lower case
 * once decoded, as the store keeps ids (it makes them, lower case): RFC 9562 reads UUIDs
 * case-insensitively on input, and an upper-case one named nothing (a 404, or a signal to no
 * task). Only a leading UUID (alone, or before a composite's `:`) is folded: a composite task
 * id's steps and slugs, and text of any other shape, are left as written.
 */
const LEADING_UUID_RE = new RegExp(`^${UUID_RE.source.slice(1, -1)}(?=$|:)`, "u")
const foldUuid = SchemaTransformation.transform<string, string>({
  decode: (s) => (/[A-F]/.test(s.slice(0, 36)) && LEADING_UUID_RE.test(s) ? s.slice(0, 36).toLowerCase() + s.slice(36) : s),
  encode: (s) => s
})
export const UuidInput = Uuid.pipe(Schema.decodeTo(Uuid, foldUuid))
export const TaskIdInput = TaskId.pipe(Schema.decodeTo(TaskId, foldUuid))
/**
 * Text that names a record by id where any text is taken (the workspace API's paths: an id of
 * another shape names nothing, a 404), its leading UUID folded as above. Published as `schema`.
 */
export const withUuidFolded = <S extends Schema.Codec<string, string>>(schema: S) =>
  schema.pipe(Schema.decodeTo(Schema.toType(schema), foldUuid))

/** The part of a task id before the first `:`, i.e. the root task UUID. */
export const rootTaskId = (taskId: string): string => taskId.split(":", 1)[0]!

export const Timestamp = Schema.String.annotate({ description: "ISO 8601 timestamp", format: "date-time" })
