/**
 * The `McpWorkers` service: open a stateful MCP connection in a dedicated owner thread, then use it from
 * anywhere in the process by its opaque id.
 *
 * @example
 * ```ts
 * // Open, call, close: each failure says whether the request reached the server
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   const id = yield* workers.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *   const result = yield* workers.callTool(id, "echo", { message: "hello" }, { timeout: "10 seconds" }).pipe(
 *     // not sent, not queued: another request is in flight on this worker, and a retry is safe
 *     Effect.catchTag("WorkerBusy", () => Effect.succeed(undefined)),
 *     // sent, outcome unknown: the request was cancelled at the server, and is never replayed
 *     Effect.catchTag("DeliveryUnknown", (error) => Effect.logWarning(error.message))
 *   )
 *   const { cleanup } = yield* workers.close(id) // cleanup.activeProcesses === 0: no server process is left
 *   return { result, cleanup }
 * })
 *
 * // the registry's finalizer closes any worker still open
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layer())))
 * ```
 *
 * @example
 * ```ts
 * // The id is plain data: another fiber, or another thread with `NodeMcpWorkers.layerRemote`, uses the same worker
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { Effect, Stream } from "effect"
 *
 * export const watchTools = (id: string) =>
 *   Effect.gen(function* () {
 *     const workers = yield* McpWorkers
 *     const { tools } = yield* workers.listTools(id)
 *     console.log(tools.map((tool) => tool.name))
 *     // the server's notifications from now on; the stream ends when the worker closes
 *     yield* workers.events(id).pipe(
 *       Stream.filter((event) => event.method === "notifications/tools/list_changed"),
 *       Stream.runForEach(() => workers.listTools(id).pipe(Effect.andThen(({ tools }) => console.log(tools.length))))
 *     )
 *   })
 * ```
 *
 * @example
 * ```ts
 * // A status is safe to print (no config, arguments or results); `cancel` ends exactly one request in flight
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { Effect, Option } from "effect"
 *
 * export const cancelInFlight = (id: string) =>
 *   Effect.gen(function* () {
 *     const workers = yield* McpWorkers
 *     const status = yield* workers.status(id)
 *     yield* Option.match(Option.fromNullable(status.requestId), {
 *       onNone: () => Effect.void,
 *       // its caller gets DeliveryUnknown { reason: "cancelled" }
 *       onSome: (requestId) => workers.cancel(id, requestId)
 *     })
 *   })
 * ```
 *
 * @since 0.1.0
 */
import * as CallerClient from "@mcp-worker/caller/Client"
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as Surface from "@mcp-worker/caller/Surface"
import type { CallToolResult, ListToolsResult } from "@modelcontextprotocol/client"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import { InvalidInput, type McpWorkerError } from "./McpWorkerError.js"
import type * as AgentHost from "./agentHost/AgentHost.js"
import type * as McpConfig from "./agentHost/McpConfig.js"
import type * as OpenAll from "./agentHost/OpenAll.js"
import type * as ToolBinding from "./agentHost/ToolBinding.js"
import type * as Operations from "./Operations.js"
import type * as ResultFile from "./ResultFile.js"
import type { NotificationMethod } from "./protocol/OwnerProtocol.js"
import type { ServerConfigInput } from "./ServerConfig.js"
import type { WorkerId } from "./WorkerId.js"
import type { WorkerStatus } from "./WorkerStatus.js"
import type { EffectRuntime } from "./internal/effectRuntime.js"

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
 * What `callTool` answers for a result over `maxResultBytes` that was spilled (`onTooLarge`); tell it from a
 * server's result with `ResultFile.isSpilled`.
 *
 * @since 0.1.0
 * @category models
 */
export type SpilledResult = ResultFile.SpilledResult

/**
 * Options of `open`.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends CallerOptions.Open<Duration.DurationInput> {}

/**
 * Where a worker's owner runs: a thread of the host, or a child process of its own.
 *
 * @since 0.1.0
 * @category models
 */
export type Isolation = CallerOptions.Isolation

/**
 * The isolation options of `open`, checked.
 *
 * @since 0.1.0
 * @category models
 */
export interface OwnerPlacement {
  readonly isolation: Isolation
  readonly maxOldGenerationSizeMb: number | undefined
}

/**
 * Checks the isolation options of `open` (`isolation`, `maxOldGenerationSizeMb`); what is wrong is refused with its
 * path. Nothing else of the options is read.
 *
 * @since 0.1.0
 * @category constructors
 */
export const placementOf = (
  options: { readonly isolation?: unknown; readonly maxOldGenerationSizeMb?: unknown } | undefined
): Either.Either<OwnerPlacement, InvalidInput> => {
  const isolation = options?.isolation ?? "thread"
  if (isolation !== "thread" && isolation !== "process") {
    return Either.left(
      new InvalidInput({
        where: "config",
        path: "options.isolation",
        message: 'isolation must be "thread" or "process"',
        delivery: "not_sent"
      })
    )
  }
  const limit = options?.maxOldGenerationSizeMb
  if (
    limit !== undefined &&
    !(typeof limit === "number" && Number.isInteger(limit) && limit >= 16 && limit <= 65_536)
  ) {
    return Either.left(
      new InvalidInput({
        where: "config",
        path: "options.maxOldGenerationSizeMb",
        message: "maxOldGenerationSizeMb must be a whole number from 16 to 65536",
        delivery: "not_sent"
      })
    )
  }
  return Either.right({ isolation, maxOldGenerationSizeMb: limit })
}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions extends CallerOptions.Close<Duration.DurationInput> {}

/**
 * Options of `events`.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventsOptions extends CallerOptions.Events {}

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
export const defaultEventsCapacity: number = CallerClient.defaultEventsCapacity

/**
 * The largest `events` capacity.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxEventsCapacity: number = CallerClient.maxEventsCapacity

export type {
  /**
   * The raw `tools/call` result, as the SDK declares it.
   *
   * @since 0.1.0
   * @category models
   */
  CallToolResult,
  /**
   * The raw `tools/list` result, as the SDK declares it.
   *
   * @since 0.1.0
   * @category models
   */
  ListToolsResult
}

/**
 * The types this face gives the surface table (`@mcp-worker/caller/Surface`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SurfaceTypes {
  readonly config: ServerConfigInput
  readonly workerId: WorkerId
  readonly status: WorkerStatus
  readonly notification: ServerNotification
  readonly openOptions: OpenOptions
  readonly closeOptions: CloseOptions
  readonly eventsOptions: EventsOptions
  readonly document: McpConfig.Document
  readonly openAllOptions: OpenAll.OpenAllOptions<OpenOptions>
  readonly describeOptions: AgentHost.DescribeOptions
  readonly requestOptions: Operations.RequestOptions
  readonly binding: ToolBinding.Binding<ToolBinding.EffectMethod>
  readonly error: McpWorkerError
}

/**
 * The life-cycle operations of the service: open, status, cancel, close, events.
 *
 * @since 0.1.0
 * @category models
 */
export interface Lifecycle extends Surface.Methods<Surface.Lifecycle<SurfaceTypes>, EffectRuntime> {}

/**
 * Every operation, each by worker id, each with its typed failures: the life cycle, every request of the
 * operation table (`Operations.requests`: `listTools`, `callTool`, `listResources`, `readResource`, `getPrompt`…),
 * and the agent-host operations over them (`AgentHost`: `openAll`, `closeAll`, `describe`, `tools`).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpWorkersService extends Lifecycle, Operations.Service<Operations.Requests>, AgentHost.AgentHost {}

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
