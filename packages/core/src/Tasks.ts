/**
 * Tasks: a tool call the server runs on after answering, so that it outlives the run that started it and leaves the
 * worker free meanwhile (C70). `startTask` answers the server's `CreateTaskResult`; the worker id and its
 * `task.taskId` are the task's handle, plain strings any thread, process or runner that can reach the worker may use
 * with `getTask`, `taskResult`, `cancelTask` and `listTasks`. A task id is a secret: whoever holds it reads the
 * result, so the library never puts one in a status, log, span, metric or error (C71).
 *
 * These are operations of the one table (`Operations.requests`): each follows the rules of every request (one at a
 * time, the whole budget, `WorkerBusy` is `not_sent`, nothing replayed). Servers of the 2025-11-25 revision that
 * declare `capabilities.tasks` run them, and servers of the 2026-07-28 revision that declare the
 * `io.modelcontextprotocol/tasks` extension (C75), where `listTasks` does not exist and the server decides which call
 * becomes a task.
 *
 * @since 0.1.0
 */
import type * as Caller from "@mcp-worker/caller/Operations"
import * as Mcp from "@modelcontextprotocol/client"
import type * as Duration from "effect/Duration"
import type { ListOptions, Operation, RequestOptions } from "./Operations.js"
import * as Extension from "./internal/owner/tasksExtension.js"

/**
 * The options of `startTask`.
 *
 * @since 0.1.0
 * @category models
 */
export interface StartTaskOptions extends Caller.StartTaskOptions<Duration.DurationInput> {}

/**
 * The key of `_meta` that marks a task's result, and a server's request made for one task, with its task id.
 *
 * @since 0.1.0
 * @category constants
 */
export const relatedTaskKey = "io.modelcontextprotocol/related-task"

/**
 * The extension that carries tasks on the 2026-07-28 revision (C75): a server declares it in its capabilities'
 * `extensions`, a client in each request's `_meta` client capabilities.
 *
 * @since 0.1.0
 * @category constants
 */
export const extensionId: string = Extension.extensionId

/**
 * The task operations, by their name on `McpWorkers` (`Operations.requests` holds them).
 *
 * @since 0.1.0
 * @category models
 */
export interface Requests {
  /**
   * `tools/call` as a task (`task: { ttl }`): the server's `CreateTaskResult`, whose `task.taskId` names the task
   * from then on. Refused before sending when the server runs no tool calls as tasks, or listed the tool as
   * `forbidden` (C72).
   */
  readonly startTask: Operation<Caller.ArgsOf<"startTask">, StartTaskOptions, Mcp.CreateTaskResult>
  /** `tasks/get`: the task's status now (`working`, `input_required`, `completed`, `failed`, `cancelled`). */
  readonly getTask: Operation<Caller.ArgsOf<"getTask">, RequestOptions, Mcp.GetTaskResult>
  /**
   * `tasks/result`: waits, within the budget, until the task ends and answers the tool's result (or the server's
   * error). While it waits, the server's questions for the task (elicitation, sampling) reach the host's handlers. A
   * budget that runs out ends the wait only: the task runs on (C73). On the 2026-07-28 revision it polls `tasks/get`
   * instead, and answers the task's input requests with `tasks/update` (C75b).
   */
  readonly taskResult: Operation<Caller.ArgsOf<"taskResult">, RequestOptions, Mcp.CallToolResult>
  /**
   * `tasks/cancel`: asks the server to cancel the task, and answers the task's state after it, which may be one it
   * reached first (`completed`) (C74). On the 2026-07-28 revision the cancel is an ack, and the state is read after it
   * (C75c).
   */
  readonly cancelTask: Operation<Caller.ArgsOf<"cancelTask">, RequestOptions, Mcp.CancelTaskResult>
  /**
   * `tasks/list`: one page of the tasks the server holds for this connection. The 2026-07-28 revision has none: there
   * it is refused before sending (C75).
   */
  readonly listTasks: Operation<Caller.ArgsOf<"listTasks">, ListOptions, Mcp.ListTasksResult>
}

/**
 * The operations that name one task by its id (their first argument): what a grant checks it started (C71).
 *
 * @since 0.1.0
 * @category operations
 */
export const byId: ReadonlySet<string> = new Set(["getTask", "taskResult", "cancelTask"])
