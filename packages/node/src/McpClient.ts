/**
 * One MCP connection for the life of a scope, in the calling thread: no owner thread, no id to pass around. It is
 * the same connection a worker has — the core `Owner` state machine over the same stdio process job or HTTP
 * transport — with the same rules: one request at a time (`WorkerBusy`), the caller's whole budget, an exact cancel
 * on timeout, interruption or `cancel` (`DeliveryUnknown`), no reconnect (`WorkerFailed`), and, when the scope
 * closes, the server's whole process tree ended and confirmed gone.
 *
 * ```ts
 * const tools = yield* McpClient.withClient(config, (client) => client.listTools())
 * ```
 *
 * @since 0.1.0
 */
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type {
  CloseFailed,
  InvalidInput,
  OpenFailed,
  RequestError,
  RequestNotPending
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import * as Operations from "@mcp-worker/core/Operations"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import type * as ToolFilter from "@mcp-worker/core/ToolFilter"
import type { WorkerId } from "@mcp-worker/core/WorkerId"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/mcpClient/clientObject.js"
import type { Handlers, OAuthProvider } from "./NodeMcpWorkers.js"

/**
 * Options of `make` and `withClient`. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win
 * over these.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Client<Duration.DurationInput, Handlers, ToolFilter.ToolFilter> {
  /** The interactive OAuth client, run in this thread, as `NodeMcpWorkers.layer({ oauth })` has it (C34). */
  readonly oauth?: OAuthProvider | undefined
}

/**
 * A request operation of the table on the client: its arguments, then its options.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options, infer A>
    ? (...rest: [...Args, options?: Options]) => Effect.Effect<A, RequestError>
    : never

/**
 * Every request of the operation table (`listTools`, `callTool`, `listResources`, `readResource`, `getPrompt`…),
 * with the same arguments as on `McpWorkers`, without the id.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = { readonly [K in keyof Operations.Requests]: RequestFn<Operations.Requests[K]> }

/**
 * One open connection.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpClient extends Requests {
  /** A fresh id naming this connection in errors, logs and its status (it is not registered anywhere). */
  readonly workerId: WorkerId
  /** The connection's status, in the shape of a worker's (`threadId` is `null`: it runs in this thread). */
  readonly status: Effect.Effect<WorkerStatus>
  /** Cancels exactly the request in flight named (`DeliveryUnknown{reason: "cancelled"}` for its caller). */
  readonly cancel: (requestId: string) => Effect.Effect<void, RequestNotPending | InvalidInput>
  /**
   * Closes the connection now and confirms its cleanup, as `McpWorkers.close` does; the scope's end then has
   * nothing left to do. A request after it fails with `WorkerFailed{kind: "closing", delivery: "not_sent"}`.
   */
  readonly close: (options?: McpWorkers.CloseOptions) => Effect.Effect<WorkerStatus, CloseFailed>
}

/**
 * Opens one connection in the current scope. The config is validated and normalized as `McpWorkers.open` does it
 * (`InvalidInput` with where it is); the connection closes when the scope closes — success, failure or
 * interruption — with the server's whole process tree ended and confirmed.
 *
 * @example
 * ```ts
 * import { McpClient } from "@mcp-worker/node"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   // one connection in this thread, closed (its process tree ended and confirmed) when the scope closes
 *   const client = yield* McpClient.make(
 *     { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
 *     { requestTimeout: "10 seconds" }
 *   )
 *   const { tools } = yield* client.listTools()
 *   const result = yield* client.callTool("echo", { message: `${tools.length} tools` })
 *   const status = yield* client.status // the shape of a worker's status; threadId is null
 *   return { result, status }
 * })
 *
 * export const main = () => Effect.runPromise(Effect.scoped(program))
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: ServerConfigInput,
  options?: Options
): Effect.Effect<McpClient, OpenFailed | InvalidInput, Scope.Scope> => internal.make(config, options)

/**
 * Runs `f` with a connection open for it alone, closed (cleanup confirmed) as soon as `f` ends, however it ends.
 *
 * @example
 * ```ts
 * import { McpClient } from "@mcp-worker/node"
 * import { Effect } from "effect"
 *
 * export const toolNames = McpClient.withClient(
 *   { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] },
 *   (client) => client.listTools().pipe(Effect.map(({ tools }) => tools.map((tool) => tool.name)))
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withClient = <A, E, R>(
  config: ServerConfigInput,
  f: (client: McpClient) => Effect.Effect<A, E, R>,
  options?: Options
): Effect.Effect<A, E | OpenFailed | InvalidInput, Exclude<R, Scope.Scope>> => internal.withClient(config, f, options)
