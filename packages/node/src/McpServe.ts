/**
 * The gateway: the host's workers served as one MCP server, by grant. An IDE, an agent framework or a sandbox that
 * speaks MCP reaches the live workers a grant names, each tool as `<worker><separator><tool>`, over streamable HTTP on
 * 127.0.0.1 (`Authorization: Bearer <grant>`) or on stdio. A call goes to its worker once; a call that did not
 * complete says over MCP whether it was sent (`data.delivery`), and nothing is retried or replayed.
 *
 * @since 0.1.0
 */
import type { InvalidInput, UnknownWorker } from "@mcp-worker/core/McpWorkerError"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type * as HostView from "./HostView.js"
import type { ListenError } from "./NodeMcpWorkers.js"
import * as internal from "./internal/serve/layer.js"
import type * as McpServer from "./internal/serve/mcpServer.js"

/**
 * A request of the operation table the gateway serves of a worker.
 *
 * @since 0.1.0
 * @category models
 */
export type ServedOperation =
  | "listTools"
  | "callTool"
  | "listResources"
  | "listResourceTemplates"
  | "readResource"
  | "subscribeResource"
  | "unsubscribeResource"
  | "listPrompts"
  | "getPrompt"
  | "complete"
  | "startTask"
  | "getTask"
  | "taskResult"
  | "cancelTask"
  | "listTasks"

/**
 * A worker of a grant: its id, and the tools it serves (default: every tool its filter offers).
 *
 * @since 0.1.0
 * @category models
 */
export interface ServedWorker {
  readonly id: string
  readonly tools?: ReadonlyArray<string> | undefined
}

/**
 * How long a grant holds. Default: until it is revoked.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeGrantOptions {
  readonly ttl?: Duration.DurationInput | undefined
  /**
   * With exactly one worker: its tools and prompts keep their own names, unprefixed (C141). Default `false`; with any
   * other number of workers, `InvalidInput` at `options.unprefixed`.
   */
  readonly unprefixed?: boolean | undefined
}

/**
 * Where and how the gateway serves.
 *
 * @since 0.1.0
 * @category models
 */
export interface ServeOptions {
  /**
   * Serve streamable HTTP on 127.0.0.1 (`port` 0 or absent: a free port), or with `path` on a Unix domain socket there
   * (its directory this user's, 0700; the socket 0600; removed when the layer ends). Absent: stdio only (`serveStdio`).
   */
  readonly http?: { readonly port?: number | undefined; readonly path?: string | undefined } | undefined
  /** Between a worker's name and its tool's (default `"__"`): 1 to 64 of `A-Z a-z 0-9 _ . -`. */
  readonly separator?: string | undefined
  /** The largest request body read (default: the socket plane's frame bound, 16 MiB). */
  readonly maxBodyBytes?: number | undefined
  /** The most HTTP sessions open at once (default 256): past it, the one idle the longest is closed. */
  readonly maxSessions?: number | undefined
}

/**
 * The streams `serveStdio` serves a client on: a Node `Readable` and `Writable` fit.
 *
 * @since 0.1.0
 * @category models
 */
export type StdioStreams = McpServer.StdioStreams

/**
 * The gateway of one host.
 *
 * @since 0.1.0
 * @category models
 */
export interface McpServeService {
  /**
   * A new bearer grant of the open workers named by `workers` (served name → worker id or `ServedWorker`). A name that
   * is not 1 to 64 of `A-Z a-z 0-9 _ . -`, or that holds the separator, is `InvalidInput` at `workers.<name>`.
   */
  readonly grant: (
    workers: Readonly<Record<string, string | ServedWorker>>,
    options?: ServeGrantOptions
  ) => Effect.Effect<string, UnknownWorker | InvalidInput>
  /** Ends a grant at once: its next HTTP request is 401; its calls in flight run on. */
  readonly revoke: (grant: string) => Effect.Effect<void, UnknownWorker>
  /** The streamable HTTP endpoint (`http://127.0.0.1:<port>/mcp`, or `http+unix://<path>/mcp`), when serving HTTP. */
  readonly url: string | undefined
  /** Serves one MCP client with `grant` on `io` (default: this process's stdin and stdout) until its input ends. */
  readonly serveStdio: (grant: string, io?: StdioStreams) => Effect.Effect<void, UnknownWorker, Scope.Scope>
}

/**
 * The gateway could not start serving.
 *
 * @since 0.1.0
 * @category errors
 */
export const ServeError: typeof internal.ServeError = internal.ServeError

/**
 * @since 0.1.0
 * @category errors
 */
export type ServeError = internal.ServeError

/**
 * The gateway of the host whose view it is given (`NodeMcpWorkers.layerWithView` or `layerListen`): one registry,
 * whatever other planes it serves (C118).
 *
 * @example
 * ```ts
 * import { McpWorkers } from "@mcp-worker/core/McpWorkers"
 * import { McpServe, NodeMcpWorkers } from "@mcp-worker/node"
 * import { Effect, Layer } from "effect"
 *
 * const program = Effect.gen(function* () {
 *   const workers = yield* McpWorkers
 *   const serve = yield* McpServe.McpServe
 *   const id = yield* workers.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *   // `everything__echo` and every other tool, for any MCP client at serve.url with this bearer grant
 *   const grant = yield* serve.grant({ everything: id }, { ttl: "1 hour" })
 *   yield* Effect.log(`${serve.url} Authorization: Bearer ${grant.slice(0, 8)}…`)
 *   yield* Effect.never
 * })
 *
 * const layer = McpServe.layerServe({ http: {} }).pipe(Layer.provideMerge(NodeMcpWorkers.layerWithView()))
 * export const main = () => Effect.runPromise(program.pipe(Effect.provide(layer)))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServe: (
  options?: ServeOptions
) => Layer.Layer<internal.McpServe, ServeError | ListenError | InvalidInput, HostView.HostView> = internal.layerServe

export {
  /**
   * The service tag, provided by `layerServe`.
   *
   * @since 0.1.0
   * @category tags
   */
  McpServe
} from "./internal/serve/layer.js"
