/**
 * The entity task list's query parameters are opt-in (src/api/taskListing.ts), but a client
 * derived from the contract requires `urlParams` whenever an endpoint declares them: this lets
 * `entities.listTasks({ path })` stay as it was (no parameters sent) and takes them when given.
 * With `withResponse: true` the answer's NEXT_CURSOR_HEADER is readable (nextTaskCursor).
 */
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import type * as Effect from "effect/Effect"
import type { TaskSummary } from "../api/resources.js"
import { NEXT_CURSOR_HEADER, type TaskListQuery } from "../api/taskListing.js"

type AnyListTasks = (request: any) => Effect.Effect<any, any, any>

/** listTasks with `urlParams` optional. */
export type ListTasksMethod<F extends AnyListTasks> = F extends (request: any) => Effect.Effect<any, infer E, infer R>
  ? <WithResponse extends boolean = false>(request: {
    readonly path: { readonly entityId: string }
    readonly urlParams?: TaskListQuery | undefined
    readonly withResponse?: WithResponse
  }) => Effect.Effect<
    WithResponse extends true ? [ReadonlyArray<TaskSummary>, HttpClientResponse.HttpClientResponse] : ReadonlyArray<TaskSummary>,
    E,
    R
  >
  : never

export type WithOptionalTaskListParams<C extends { readonly entities: { readonly listTasks: AnyListTasks } }> =
  & Omit<C, "entities">
  & {
    readonly entities: Omit<C["entities"], "listTasks"> & { readonly listTasks: ListTasksMethod<C["entities"]["listTasks"]> }
  }

export const withOptionalTaskListParams = <C extends { readonly entities: { readonly listTasks: AnyListTasks } }>(
  client: C
): WithOptionalTaskListParams<C> => {
  const listTasks = client.entities.listTasks
  return {
    ...client,
    entities: {
      ...client.entities,
      listTasks: (request: { readonly urlParams?: TaskListQuery | undefined }) =>
        listTasks({ ...request, urlParams: request.urlParams ?? {} })
    }
  } as unknown as WithOptionalTaskListParams<C>
}

/** The `cursor` of the next page from a listTasks answer taken `withResponse: true`; undefined on the last page. */
export const nextTaskCursor = (response: HttpClientResponse.HttpClientResponse): string | undefined =>
  response.headers[NEXT_CURSOR_HEADER]
