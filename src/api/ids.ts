import * as Schema from "effect/Schema"

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A UUID in any version, case-insensitive (ids come from several systems). */
export const Uuid = Schema.String.pipe(
  Schema.filter((s) => UUID_RE.test(s), { message: () => "must be a UUID" }),
  Schema.annotations({ identifier: "Uuid", format: "uuid", description: "UUID" })
)

export const isUuid = (s: string): boolean => UUID_RE.test(s)

/** A task UUID, or a child workflow's composite `<parent_task_id>:<step>:<slug>`. */
export const TaskId = Schema.String.pipe(
  Schema.filter((s) => {
    // Child ids may nest (`<root>:<step>:<slug>:<step>:<slug>`); every segment is non-empty.
    const [root, ...rest] = s.split(":")
    return isUuid(root!) && rest.length % 2 === 0 && rest.every((part) => part.length > 0)
  }, { message: () => "must be a task UUID or a composite <uuid>:<step>:<slug>" }),
  Schema.annotations({
    identifier: "TaskId",
    description: "Workspace task UUID, or for a child workflow the composite `<parent_task_id>:<step>:<slug>`"
  })
)

/** The part of a task id before the first `:`, i.e. the root task UUID. */
export const rootTaskId = (taskId: string): string => taskId.split(":", 1)[0]!

export const Timestamp = Schema.String.annotations({ description: "ISO 8601 timestamp", format: "date-time" })
