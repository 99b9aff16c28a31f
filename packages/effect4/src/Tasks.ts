/**
 * Tasks on Effect 4: a tool call the server runs on after answering, so that it outlives the fiber that started it
 * and leaves the worker free meanwhile (C70). `startTask` answers the server's `CreateTaskResult`; the worker id and
 * its `task.taskId` are the task's handle for `getTask`, `taskResult`, `cancelTask` and `listTasks`. A task id is a
 * secret: the library never puts one in a status, log, span or error (C71). The same operations and models as
 * `@mcp-worker/core`'s `Tasks`, as Effect 4 types.
 *
 * @since 0.1.0
 */
import type * as Duration from "effect/Duration"
import type * as Operations from "../lib/caller/Operations.js"
import type * as McpWorkers from "./McpWorkers.js"

/**
 * The options of `startTask`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartTaskOptions extends Operations.StartTaskOptions<Duration.Input> {}

/**
 * The key of `_meta` that marks a task's result, and a server's request made for one task, with its task id.
 *
 * @since 0.1.0
 * @category constants
 */
export const relatedTaskKey = "io.modelcontextprotocol/related-task"

/**
 * The extension that carries tasks on the 2026-07-28 revision: a server declares it in its capabilities'
 * `extensions`, a client in each request's `_meta` client capabilities.
 *
 * @since 0.1.0
 * @category constants
 */
export const extensionId = "io.modelcontextprotocol/tasks"

/**
 * Where a task is: running, waiting for an answer of the client (`input_required`), or ended.
 *
 * @since 0.1.0
 * @category models
 */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

/**
 * A task as the server describes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Task {
  readonly taskId: string
  readonly status: TaskStatus
  /** How long the server keeps the task after it was created, in milliseconds; `null` for as long as it likes. */
  readonly ttl: number | null
  readonly createdAt: string
  readonly lastUpdatedAt: string
  /** How often, in milliseconds, the server suggests asking for the task's status. */
  readonly pollInterval?: number | undefined
  readonly statusMessage?: string | undefined
}

/**
 * What `startTask` answers: the task the server created.
 *
 * @since 0.1.0
 * @category models
 */
export interface CreateTaskResult extends McpWorkers.RawResult {
  readonly task: Task
}

/**
 * What `getTask` and `cancelTask` answer: the task's state now, or after the cancel.
 *
 * @since 0.1.0
 * @category models
 */
export interface TaskState extends McpWorkers.RawResult, Task {}

/**
 * What `listTasks` answers: one page of the tasks the server holds for this connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListTasksResult extends McpWorkers.RawResult {
  readonly tasks: ReadonlyArray<Task>
  readonly nextCursor?: string | undefined
}
