/**
 * The Node.js implementation of `McpWorkers`: each worker's connection lives in a dedicated owner thread, and any
 * thread of the process reaches it by id.
 *
 * @since 0.1.0
 */
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as LogLevel from "effect/LogLevel"
import type * as Scope from "effect/Scope"
import * as internal from "./internal/nodeMcpWorkers.js"
import type * as HostView from "./HostView.js"
import type * as McpGrants from "./McpGrants.js"
import type { ListenError } from "./internal/listen/socketFile.js"

/**
 * Defaults of a host registry. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win over
 * these.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Host<
  Duration.DurationInput,
  LogLevel.LogLevel,
  Handlers,
  OAuthProvider
> {}

/**
 * The host's interactive OAuth client: plain-data settings for the owner, and `authorize`, which runs in the host's
 * thread.
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuthProvider extends CallerOptions.OAuthSettings {
  /**
   * Takes the user through `authorizationUrl` and succeeds with the authorization code the redirect to `redirectUrl`
   * brought back — or with `{ code, iss }`, the redirect's `iss` too, which the owner checks against the authorization
   * server (RFC 9207, C58). A failure, or no answer within the open's budget, fails the open at stage
   * `authorization`.
   */
  readonly authorize: (request: {
    readonly workerId: string
    readonly authorizationUrl: string
  }) => Effect.Effect<string | { readonly code: string; readonly iss?: string | undefined }, unknown>
  /**
   * The tokens kept for the MCP server at `serverUrl` (the SDK's `OAuthTokens`, JSON plain data), if any: a worker
   * that finds tokens here does not ask the user. Without it, tokens live in the owner for the worker's life.
   */
  readonly tokens?: ((serverUrl: string) => Effect.Effect<unknown, unknown>) | undefined
  /** Keeps the tokens a worker obtained for the MCP server at `serverUrl`. */
  readonly saveTokens?: ((serverUrl: string, tokens: unknown) => Effect.Effect<void, unknown>) | undefined
}

/**
 * A server's request to its client, as the host's handler gets it: which worker, and the raw request params.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerRequest {
  readonly workerId: string
  readonly method: "elicitation/create" | "sampling/createMessage" | "roots/list"
  readonly params: unknown
}

/**
 * A handler: the raw result to answer with (JSON plain data: an `ElicitResult`, a `CreateMessageResult`, a
 * `ListRootsResult`), or a failure.
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (request: ServerRequest) => Effect.Effect<unknown, unknown>

/**
 * The host's handlers of server requests.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handlers {
  readonly elicitation?: Handler | undefined
  readonly sampling?: Handler | undefined
  readonly roots?: Handler | undefined
}

/**
 * Builds the host registry in the current scope: it owns every owner thread, serves the remote threads of the
 * process, and closing the scope closes every worker. Options that are not valid budgets are a defect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: (options?: Options) => Effect.Effect<McpWorkers.McpWorkersService, never, Scope.Scope> =
  internal.make

/**
 * The host registry as a layer. Build it once per process (normally in the main thread); its finalizer closes every
 * worker.
 *
 * @example
 * ```ts
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect, LogLevel } from "effect"
 *
 * // One registry per process, built where the connections should live (normally the main thread)
 * const McpLive = NodeMcpWorkers.layer({
 *   requestTimeout: "10 seconds",
 *   logLevel: LogLevel.Info,
 *   handlers: {
 *     // a server's `roots/list`, answered in the host's thread; its client declares roots only because this is here
 *     roots: () => Effect.succeed({ roots: [{ uri: "file:///work/project", name: "project" }] })
 *   }
 * })
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   const id = yield* workers.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *   return yield* workers.listTools(id)
 * })
 *
 * // closing the layer closes every worker it still owns
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(McpLive)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: (options?: Options) => Layer.Layer<McpWorkers.McpWorkers> = internal.layer

/**
 * The host layer, with its operator's view beside it (`HostView`, C82): the same host as `layer`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithView: (options?: Options) => Layer.Layer<McpWorkers.McpWorkers | HostView.HostView> =
  internal.layerWithView

/**
 * The host registry with its defaults read from `Config` (for example `Config.all({ requestTimeout:
 * Config.duration("MCP_REQUEST_TIMEOUT").pipe(Config.withDefault("30 seconds")) })`).
 *
 * @example
 * ```ts
 * import { NodeMcpWorkers } from "@mcp-worker/node"
 * import { Config } from "effect"
 *
 * export const McpLive = NodeMcpWorkers.layerConfig({
 *   requestTimeout: Config.duration("MCP_REQUEST_TIMEOUT").pipe(Config.withDefault("30 seconds")),
 *   maxResultBytes: Config.integer("MCP_MAX_RESULT_BYTES").pipe(Config.withDefault(1024 * 1024))
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: (
  config: Config.Config.Wrap<Options>
) => Layer.Layer<McpWorkers.McpWorkers, ConfigError.ConfigError> = internal.layerConfig

/**
 * `McpWorkers` for any other thread (a `worker_thread`, an agent's `execute_code` run) of a process that runs
 * `layer` in some thread: the same workers, by the same ids. Only the id and plain data cross between threads.
 * With no host running, every operation fails within 1 s with `HostUnavailable`.
 *
 * @example
 * ```ts
 * // In a worker_thread of a process whose main thread runs `NodeMcpWorkers.layer()`
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect } from "effect"
 * import { workerData } from "node:worker_threads"
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   // the id is all this thread was given: the connection stays in its owner thread
 *   const id: string = workerData.workerId
 *   return yield* workers.callTool(id, "echo", { message: "from another thread" }, { timeout: "5 seconds" })
 * }).pipe(
 *   // no host running in this process: not sent, known within 1 s
 *   Effect.catchTag("HostUnavailable", (error) => Effect.fail(error.message))
 * )
 *
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerRemote)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRemote: Layer.Layer<McpWorkers.McpWorkers> = internal.layerRemote

/**
 * Options of a listener: where its socket is, and what it accepts.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListenOptions {
  /**
   * The absolute path of the Unix domain socket. Its directory must belong to this user and be closed to everyone else
   * (0700; it is created so when missing): that directory is who may connect. The socket itself is made 0600.
   */
  readonly path: string
  /** Accept plain worker ids (full rights, `open` included) besides grants. Default: grants only. */
  readonly acceptWorkerIds?: boolean | undefined
  /** The largest frame either way, in bytes (default 16 MiB): a bigger answer is `ResultTooLarge`; use `saveTo`. */
  readonly maxFrameBytes?: number | undefined
  /** Connections served at once (default 1024); one past it is closed at once. */
  readonly maxConnections?: number | undefined
  /**
   * What every peer together may hold of the host's memory, in bytes (default 256 MiB): unfinished frames and answers
   * not yet written. Past it, the peers holding the most are closed.
   */
  readonly maxBufferedBytes?: number | undefined
  /** A connection that sends nothing for this long is closed (default 10 s); a client in use pings every second, so it is at least 2 s. */
  readonly idleTimeout?: Duration.DurationInput | undefined
}

export {
  /**
   * The listener could not start: a bad path, a directory open to others, or a live host on the socket already.
   *
   * @since 0.1.0
   * @category errors
   */
  ListenError
} from "./internal/listen/socketFile.js"

/**
 * The host registry (as `layer`) serving its workers to other processes of this machine on a Unix domain socket, and
 * the grants that hand them out (`McpGrants`), with the host's view beside them (`HostView`, as `layerWithView`): one
 * registry. Over the socket only grants are accepted, unless `acceptWorkerIds`.
 * When the scope closes, every caller in flight is answered and the socket file is removed.
 *
 * @example
 * ```ts
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { McpGrants, NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect } from "effect"
 * import { spawn } from "node:child_process"
 *
 * // its directory must be this user's and closed to everyone else (0700): that is who may connect
 * const socket = "/run/user/1000/mcp/host.sock"
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   const grants = yield* McpGrants.McpGrants
 *   const id = yield* workers.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *   // requests only (no open, no close), one tool, for ten minutes: the sandbox gets this string, never the id
 *   const grant = yield* grants.grant(id, { tools: ["echo"], ttl: "10 minutes" })
 *   const sandbox = spawn(process.execPath, ["sandbox.js"], { env: { MCP_SOCKET: socket, MCP_GRANT: grant } })
 *   yield* Effect.async<void>((resume) => {
 *     sandbox.once("exit", () => resume(Effect.void))
 *   })
 *   yield* grants.revoke(grant)
 * })
 *
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(NodeMcpWorkers.layerListen({ path: socket }))))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerListen: (
  options: ListenOptions & Options
) => Layer.Layer<McpWorkers.McpWorkers | McpGrants.McpGrants | HostView.HostView, ListenError> = internal.layerListen

/**
 * `McpWorkers` in another process of the machine, through a host's listener at `path`: the operations of a remote
 * thread (requests, `status`, `cancel`, `events`; `open` and `close` where the grant or the listener allows), by grant.
 *
 * @example
 * ```ts
 * // In another process of the machine (a sandbox), given a listener's socket path and a grant as plain data
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   // a grant stands where a worker id would: the same operations, with the grant's rights
 *   const grant = process.env.MCP_GRANT ?? ""
 *   return yield* workers.callTool(grant, "echo", { message: "from the sandbox" }, { timeout: "5 seconds" })
 * })
 *
 * const McpLive = NodeMcpWorkers.layerConnect({ path: process.env.MCP_SOCKET ?? "/run/user/1000/mcp/host.sock" })
 *
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(McpLive)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConnect: (options: ConnectOptions) => Layer.Layer<McpWorkers.McpWorkers> = internal.layerConnect

/**
 * Where a client in another process finds the host.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectOptions {
  /** The listener's socket path. */
  readonly path: string
  /** The largest frame either way, in bytes (default 16 MiB), as the listener's. */
  readonly maxFrameBytes?: number | undefined
}
