/**
 * `McpWorkers` as plain async functions, for code that is not written with Effect: an agent's `execute_code`
 * snippet, a script, a test. It works in any thread of a process whose host (`NodeMcpWorkers.layer()`) runs in some
 * thread, this one included, and rejects with the same tagged error objects as the Effect API (`_tag`, fields,
 * `message`; instances of the `@mcp-worker/core/McpWorkerError` classes).
 *
 * ```ts
 * const mcp = makePromiseClient()
 * const result = await mcp.callTool(id, "increment", {}, { timeout: 5_000, signal })
 * await mcp.dispose()
 * ```
 *
 * @since 0.1.0
 */
// `Symbol.asyncDispose` is in the declarations: they name the lib that has it, for a program whose own lib does not.
/// <reference lib="esnext.disposable" preserve="true" />
import type * as Client from "@mcp-worker/caller/Client"
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as McpConfig from "@mcp-worker/core/agentHost/McpConfig"
import type {
  CloseFailed,
  HostUnavailable,
  InvalidInput,
  OpenFailed,
  UnknownWorker
} from "@mcp-worker/core/McpWorkerError"
import type * as McpWorkers from "@mcp-worker/core/McpWorkers"
import type * as OpenAll from "@mcp-worker/core/agentHost/OpenAll"
import type * as Operations from "@mcp-worker/core/Operations"
import type { ServerConfigInput } from "@mcp-worker/core/ServerConfig"
import type * as ToolBinding from "@mcp-worker/core/agentHost/ToolBinding"
import type * as ToolDeclarations from "@mcp-worker/core/agentHost/ToolDeclarations"
import type * as ToolFilter from "@mcp-worker/core/ToolFilter"
import type { WorkerStatus } from "@mcp-worker/core/WorkerStatus"
import * as internal from "./internal/promiseClient.js"
import type { Handlers } from "./NodeMcpWorkers.js"

/**
 * A budget: milliseconds, or a duration string such as `"5 seconds"` or `"300 millis"`.
 *
 * @since 0.1.0
 * @category models
 */
export type Timeout = Client.Timeout

/**
 * Options of `open`: `McpWorkers.OpenOptions`, every one of them, with a budget as a Promise caller writes it.
 *
 * @since 0.1.0
 * @category models
 */
export interface OpenOptions extends CallerOptions.Open<Timeout> {}

/**
 * Options of every request: a budget, and a signal that stays in the calling thread (`@mcp-worker/caller`'s).
 *
 * @since 0.1.0
 * @category models
 */
export type RequestOptions = Client.RequestOptions

/**
 * Options of `listTools`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListToolsOptions extends RequestOptions {
  readonly cursor?: string | undefined
}

/**
 * Options of `close`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CloseOptions extends CallerOptions.Close<Timeout> {}

/**
 * Options of `openAll`: what a document's references are filled in from (default: this thread's `process.env`),
 * the `open` options of every entry and of one, and how many open at a time.
 *
 * @since 0.1.0
 * @category models
 */
export type OpenAllOptions = OpenAll.OpenAllOptions<OpenOptions>

/**
 * Options of `describe`: those of the rendering, and of each `listTools` page.
 *
 * @since 0.1.0
 * @category models
 */
export interface DescribeOptions extends ToolDeclarations.Options, RequestOptions {}

/**
 * The options of a bound tool's call: `callTool`'s own.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolCallOptions = Omit<Operations.CallToolOptions, "timeout"> & RequestOptions

/**
 * The six operations of `McpWorkers` as Promises, plus `dispose`.
 *
 * @since 0.1.0
 * @category models
 */
export type RequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options, infer A> ? Client.RequestFnOf<Args, Options, A> : never

/**
 * Every request of the operation table (`listTools`, `callTool`, `listResources`, `readResource`, `getPrompt`…)
 * as an async function: the same arguments as on `McpWorkers`, with `RequestOptions` last.
 *
 * @since 0.1.0
 * @category models
 */
export type Requests = { readonly [K in keyof Operations.Requests]: RequestFn<Operations.Requests[K]> }

/**
 * Every operation of `McpWorkers` as a Promise, rejecting with the same tagged errors.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseClient extends Requests {
  /** Opens a worker owned by the host (it outlives this thread); resolves with its id. */
  readonly open: (config: ServerConfigInput, options?: OpenOptions) => Promise<string>
  readonly status: (id: string) => Promise<WorkerStatus>
  readonly cancel: (id: string, requestId: string) => Promise<void>
  readonly close: (id: string, options?: CloseOptions) => Promise<WorkerStatus>
  /**
   * Opens every entry of a config document (`McpConfig`) concurrently; resolves per entry with its id or why it
   * did not open, never rejects for one entry. The workers belong to the host, as with `open`.
   */
  readonly openAll: (
    document: McpConfig.Document,
    options?: OpenAllOptions
  ) => Promise<OpenAll.OpenAllResult<OpenFailed | HostUnavailable>>
  /** Closes every opened worker of an `openAll` result (or a record of ids), one confirmed cleanup each. */
  readonly closeAll: (
    workers: Readonly<Record<string, OpenAll.OpenResult<unknown> | string>>,
    options?: CloseOptions
  ) => Promise<
    Readonly<Record<string, OpenAll.CloseResult<UnknownWorker | InvalidInput | CloseFailed | HostUnavailable>>>
  >
  /** TypeScript declarations of the worker's tools, every page of `tools/list` (`ToolDeclarations.render`). */
  readonly describe: (id: string, options?: DescribeOptions) => Promise<string>
  /**
   * The worker's tools as methods (`tools.get_sum({ a, b }, { signal })`), each `callTool` with the tool's real
   * name: the same results, rejections and options. Method names are those of `describe`.
   */
  readonly tools: (
    id: string,
    options?: RequestOptions
  ) => Promise<ToolBinding.Binding<ToolBinding.PromiseMethod<ToolCallOptions>>>
  /**
   * The worker's server notifications from this call on, as an async iterator (`for await`). Leaving the loop (or
   * `return()`) unsubscribes; the iterator ends when the worker closes or its connection is gone. A subscriber that
   * does not keep up loses the oldest notifications beyond `capacity` (counted in `status().notifications`).
   */
  readonly events: (
    id: string,
    options?: McpWorkers.EventsOptions
  ) => AsyncIterableIterator<McpWorkers.ServerNotification> & AsyncDisposable
  /** Closes this client's channels (not the workers: they belong to the host). Calls in flight are interrupted. */
  readonly dispose: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * Options of `makePromiseClient`.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /**
   * The socket path of a host's listener (`NodeMcpWorkers.layerListen`): the client then works from any process of
   * the machine, by grant, instead of from a thread of the host's process.
   */
  readonly connect?: string | undefined
}

/**
 * Makes a client. Nothing starts until the first call; idle, it never keeps the thread (or process) alive.
 *
 * @example
 * ```ts
 * // An agent's `execute_code` snippet in a fresh worker_thread: nothing but the worker id was kept from an earlier run
 * import { WorkerBusy } from "@mcp-worker/core/McpWorkerError"
 * import { makePromiseClient } from "@mcp-worker/node"
 *
 * export async function snippet(id: string, signal: AbortSignal) {
 *   const mcp = makePromiseClient()
 *   try {
 *     // aborting `signal` cancels exactly this request at the server
 *     return await mcp.callTool(id, "echo", { message: "hello" }, { timeout: 5_000, signal })
 *   } catch (error) {
 *     // the Effect API's tagged errors: WorkerBusy was not sent, so it is safe to try again later
 *     if (error instanceof WorkerBusy) return undefined
 *     throw error
 *   } finally {
 *     await mcp.dispose() // this client's channels only: the worker belongs to the host
 *   }
 * }
 * ```
 *
 * @example
 * ```ts
 * // In another process of the machine, through a host's listener (`NodeMcpWorkers.layerListen`), by grant
 * import { makePromiseClient } from "@mcp-worker/node"
 *
 * export async function sandbox(socket: string, grant: string) {
 *   const mcp = makePromiseClient({ connect: socket })
 *   try {
 *     const { tools } = await mcp.listTools(grant) // only the tools the grant allows
 *     return await mcp.callTool(grant, tools[0]?.name ?? "echo", { message: "hello" }, { timeout: "5 seconds" })
 *   } finally {
 *     await mcp.dispose()
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePromiseClient: (options?: MakeOptions) => PromiseClient = internal.makePromiseClient

/**
 * A request of the operation table on one connection, as an async function: its arguments, then `RequestOptions`.
 *
 * @since 0.1.0
 * @category models
 */
export type ClientRequestFn<O> =
  O extends Operations.Operation<infer Args, infer Options, infer A>
    ? (...rest: [...Args, options?: Omit<Options, "timeout"> & RequestOptions]) => Promise<A>
    : never

/**
 * The connection `withClient` hands its callback: every request of the operation table as a Promise (the same
 * options, budgets and signal as the Promise client), its status and `cancel`.
 *
 * @since 0.1.0
 * @category models
 */
export type ScopedClient = { readonly [K in keyof Operations.Requests]: ClientRequestFn<Operations.Requests[K]> } & {
  /** A fresh id naming this connection in errors and its status (it is not registered anywhere). */
  readonly workerId: string
  readonly status: () => Promise<WorkerStatus>
  readonly cancel: (requestId: string) => Promise<void>
}

/**
 * Options of `withClient`. A config's own `timeoutMs` and `maxResultBytes`, and a call's `timeout`, win over these.
 *
 * @since 0.1.0
 * @category models
 */
export interface WithClientOptions {
  /** Budget for the server to start and complete `initialize`. */
  readonly timeout?: Timeout | undefined
  /** The budget of a request whose config names no `timeoutMs` (default 30 s). */
  readonly requestTimeout?: Timeout | undefined
  /** The budget of the close once the callback settled (default 5 s). */
  readonly closeTimeout?: Timeout | undefined
  /** The largest answer of a server whose config names no `maxResultBytes` (default 64 MiB). */
  readonly maxResultBytes?: number | undefined
  /** Answers to the requests the server may send its client, run in this thread. */
  readonly handlers?: Handlers | undefined
  /** Which of the server's tools the client offers: glob patterns to `allow` and to `deny` (`ToolFilter`). */
  readonly tools?: ToolFilter.ToolFilter | undefined
}

/**
 * Opens one connection in this thread (no host needed), runs `f` with it, and closes it once `f` settles, with the
 * server's whole process tree ended and confirmed; resolves or rejects as `f` did. Opening rejects with the same
 * tagged errors as `open` (`InvalidInput`, `OpenFailed`).
 *
 * ```ts
 * const tools = await withClient(config, (client) => client.listTools({ timeout: 5_000 }))
 * ```
 *
 * @example
 * ```ts
 * import { withClient } from "@mcp-worker/node/PromiseClient"
 *
 * // one connection in this thread for one callback: no host, no id; closed with its process tree confirmed gone
 * export const toolNames = () =>
 *   withClient({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] }, async (client) => {
 *     const { tools } = await client.listTools({ timeout: 5_000 })
 *     return tools.map((tool) => tool.name)
 *   })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const withClient: <A>(
  config: ServerConfigInput,
  f: (client: ScopedClient) => Promise<A>,
  options?: WithClientOptions
) => Promise<A> = internal.withClient
