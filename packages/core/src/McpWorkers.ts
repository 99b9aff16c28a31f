/**
 * The `McpWorkers` service: open a stateful MCP connection in a dedicated owner thread, then use it from
 * anywhere in the process by its opaque id.
 *
 * @since 0.1.0
 */
import type { CallToolResult, ListToolsResult } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"
import type {
  CloseFailed,
  HostUnavailable,
  InvalidInput,
  OpenFailed,
  RequestNotPending,
  UnknownWorker
} from "./McpWorkerError.js"
import type * as Operations from "./Operations.js"
import type { NotificationMethod } from "./OwnerProtocol.js"
import type { ServerConfigInput } from "./ServerConfig.js"
import type { WorkerId } from "./WorkerId.js"
import type { WorkerStatus } from "./WorkerStatus.js"

/**
 * Options of `listTools` and `callTool`.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestOptions = Operations.RequestOptions

/**
 * Options of `callTool`: the request options and `saveTo`.
 *
 * @since 0.1.0
 * @category models
 */
export type CallToolOptions = Operations.CallToolOptions

/**
 * What `callTool` with `saveTo` answers.
 *
 * @since 0.1.0
 * @category models
 */
export type SavedResult = Operations.SavedResult

/**
 * Options of `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions {
  /** Budget for the thread to start and the server to complete `initialize`. Default as for requests. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions {
  /** Budget for ending the connection and confirming cleanup. Default: 5 s. */
  readonly timeout?: Duration.DurationInput | undefined
}

/**
 * Options of `events`.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventsOptions {
  /**
   * How many notifications wait for this subscriber at most; past it the oldest is dropped (and counted in the
   * worker's `status().notifications.dropped`). A whole number from 1 to 65,536. Default: 256.
   */
  readonly capacity?: number | undefined
}

/**
 * One server notification, as the server sent it: `params` is untrusted data the library does not interpret.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerNotification {
  readonly method: NotificationMethod
  readonly params: { readonly [key: string]: unknown }
}

/**
 * The default number of notifications waiting for one `events` subscriber.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultEventsCapacity = 256

/**
 * The largest `events` capacity.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxEventsCapacity = 65_536

/**
 * The raw MCP result types, as the SDK declares them.
 *
 * @since 0.1.0
 * @category models
 */
export type { CallToolResult, ListToolsResult }

/**
 * The life-cycle operations of the service: open, status, cancel, close.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lifecycle {
  readonly open: (
    config: ServerConfigInput,
    options?: OpenOptions
  ) => Effect.Effect<WorkerId, OpenFailed | InvalidInput | HostUnavailable>
  readonly status: (id: string) => Effect.Effect<WorkerStatus, UnknownWorker | HostUnavailable>
  readonly cancel: (
    id: string,
    requestId: string
  ) => Effect.Effect<void, UnknownWorker | RequestNotPending | HostUnavailable>
  readonly close: (
    id: string,
    options?: CloseOptions
  ) => Effect.Effect<WorkerStatus, UnknownWorker | CloseFailed | HostUnavailable>
  /**
   * The worker's server notifications from now on (`tools/list_changed`, `resources/list_changed`,
   * `resources/updated`, `prompts/list_changed`, `notifications/message`), in the order the server sent them. Each
   * subscriber has its own bounded buffer: one that does not keep up loses the oldest, never memory. The stream
   * ends when the worker closes or its connection is gone.
   */
  readonly events: (
    id: string,
    options?: EventsOptions
  ) => Stream.Stream<ServerNotification, UnknownWorker | InvalidInput | HostUnavailable>
}

/**
 * Every operation, each by worker id, each with its typed failures: the life cycle, and every request of the
 * operation table (`Operations.requests`: `listTools`, `callTool`, `listResources`, `readResource`, `getPrompt`…).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpWorkersService extends Lifecycle, Operations.Service<Operations.Requests> {}

/**
 * The service: stateful MCP connections in owner threads, used by id from anywhere in the process.
 *
 * @since 0.1.0
 * @category tags
 */
export class McpWorkers extends Context.Tag("@mcp-worker/core/McpWorkers")<McpWorkers, McpWorkersService>() {}

/**
 * The default request budget when neither the call nor the config names one.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRequestTimeoutMs = 30_000

/**
 * The default close budget.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultCloseTimeoutMs = 5_000
