/**
 * The host registry without Effect at its edge: `NodeMcpWorkers.layer` run in a private `ManagedRuntime`, every
 * operation a Promise with `{ signal }`, rejecting with the same tagged error objects as the Promise client, server
 * requests answered by Promise handlers, and the registry's log lines handed to a sink. It is the boundary another
 * runtime (an Effect 4 application, a plain Node program) builds on, so the implementation stays one.
 *
 * ```ts
 * const host = await makePromiseHost({ requestTimeout: 10_000, log: (entry) => console.log(entry.message) })
 * const id = await host.open({ command: "npx", args: ["-y", "some-mcp-server"] })
 * const result = await host.callTool(id, "do_something", {}, { signal })
 * await host.dispose() // closes every worker
 * ```
 *
 * @since 0.1.0
 */
// `Symbol.asyncDispose` is in the declarations: they name the lib that has it, for a program whose own lib does not.
/// <reference lib="esnext.disposable" preserve="true" />
import type * as CallerOptions from "@mcp-worker/caller/Options"
import type * as NodeMcpWorkers from "./NodeMcpWorkers.js"
import * as internal from "./internal/promiseHost.js"
import type * as PromiseClient from "./PromiseClient.js"

/**
 * A log level by name, as `LogLevel.Literal` spells it.
 *
 * @since 0.1.0
 * @category models
 */
export type LogLevelName = "All" | "Trace" | "Debug" | "Info" | "Warning" | "Error" | "Fatal" | "None"

/**
 * One log line of the registry, as plain data.
 *
 * @since 0.1.0
 * @category models
 */
export interface LogEntry {
  readonly level: Exclude<LogLevelName, "All" | "None">
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
  /** Open log spans: name → start (epoch ms). */
  readonly spans: Readonly<Record<string, number>>
  readonly date: Date
  /** The cause logged with the line, pretty-printed, if any. */
  readonly cause: string | undefined
}

/**
 * A server request's handler: it resolves with the raw result to answer with (JSON plain data), or rejects; the
 * signal is aborted when the answer is no longer wanted (the request budget ended, the host is closing).
 *
 * @since 0.1.0
 * @category models
 */
export type Handler = (
  request: NodeMcpWorkers.ServerRequest,
  options: { readonly signal: AbortSignal }
) => Promise<unknown>

/**
 * The host's handlers of server requests (see `NodeMcpWorkers.Options.handlers`).
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
 * The host's interactive OAuth client, with Promise functions (see `NodeMcpWorkers.OAuthProvider`).
 *
 * @since 0.1.0
 * @category models
 */
export interface OAuthProvider extends CallerOptions.OAuthSettings {
  readonly authorize: (
    request: { readonly workerId: string; readonly authorizationUrl: string },
    options: { readonly signal: AbortSignal }
  ) => Promise<string>
  readonly tokens?: ((serverUrl: string, options: { readonly signal: AbortSignal }) => Promise<unknown>) | undefined
  readonly saveTokens?:
    ((serverUrl: string, tokens: unknown, options: { readonly signal: AbortSignal }) => Promise<void>) | undefined
}

/**
 * Options of the Promise host: the registry's defaults with budgets as milliseconds or duration strings, Promise
 * handlers, and where its log lines go.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends CallerOptions.Host<PromiseClient.Timeout, LogLevelName, Handlers, OAuthProvider> {
  /**
   * Receives every log line of the registry, whatever its level (the sink filters). Without it, lines go to
   * Effect's default logger at its default minimum level.
   */
  readonly log?: ((entry: LogEntry) => void) | undefined
}

/**
 * Every operation of `McpWorkers` in the host's thread as a Promise, plus `dispose`, which closes every worker.
 * Aborting a request's signal interrupts it: the request is cancelled at the server, and the call rejects with
 * `signal.reason`.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromiseHost extends Omit<PromiseClient.PromiseClient, "dispose" | typeof Symbol.asyncDispose> {
  /** Closes every worker (each with its tree ended and confirmed), then the registry. */
  readonly dispose: () => Promise<void>
  readonly [Symbol.asyncDispose]: () => Promise<void>
}

/**
 * The host's handlers for Promise handlers: each answers with its Promise, a rejection becomes the server's JSON-RPC
 * error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handlersOf: (handlers: Handlers | undefined) => NodeMcpWorkers.Handlers | undefined = internal.handlersOf

/**
 * Starts a host registry in this thread, with its own runtime, and hands out its operations as Promises.
 *
 * @example
 * ```ts
 * import { makePromiseHost } from "@mcp-worker/node/PromiseHost"
 *
 * export async function main(signal: AbortSignal) {
 *   const host = await makePromiseHost({
 *     requestTimeout: "10 seconds",
 *     // every line of the registry, whatever its level: the sink filters
 *     log: (entry) => (entry.level === "Debug" ? undefined : console.error(entry.level, entry.message)),
 *     handlers: {
 *       elicitation: async () => ({ action: "decline" })
 *     }
 *   })
 *   try {
 *     const id = await host.open({ command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"] })
 *     const result = await host.callTool(id, "echo", { message: "hello" }, { signal })
 *     const status = await host.close(id) // status.cleanup.activeProcesses === 0
 *     return { result, status }
 *   } finally {
 *     await host.dispose() // closes every worker still open, each with its process tree ended and confirmed
 *   }
 * }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makePromiseHost: (options?: Options) => Promise<PromiseHost> = internal.makePromiseHost
