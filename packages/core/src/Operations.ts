/**
 * The table of request operations: every MCP request a caller can make on a worker, defined once. Its method and how
 * its arguments become the request's params (checked as JSON plain data in the calling thread) are
 * `@mcp-worker/caller/Operations`'s entry, which types its arguments; here are its span and the protocol's schema of its
 * result (`result`), and `Requests` says its options and result type. The surfaces are derived from it (`derive`),
 * and the owner sends any method of it as a plain request, its result checked against `result`.
 *
 * Every request follows the same rules: one at a time per worker (`WorkerBusy`), the whole budget as the caller
 * sees it, an exact cancel on timeout, interruption or `cancel` (`DeliveryUnknown`), and results returned raw.
 *
 * @since 0.1.0
 */
import type * as Caller from "@mcp-worker/caller/Operations"
import type * as Plane from "@mcp-worker/caller/Plane"
import * as Mcp from "@modelcontextprotocol/client"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type { RequestError } from "./McpWorkerError.js"
import type { Method } from "./protocol/OwnerProtocol.js"
import type * as ResultFile from "./ResultFile.js"
import * as Tasks from "./Tasks.js"
import { fromCaller } from "./OperationParams.js"

/**
 * The options every request takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestOptions extends Caller.RequestOptions<Duration.DurationInput> {}

/**
 * One progress notification of a request: `progress` (and `total`, when the server knows it) as the server counts
 * them, and its optional message.
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress extends Plane.Progress {}

/**
 * The options of `callTool`.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallToolOptions extends Caller.CallToolOptions<Duration.DurationInput> {}

/**
 * What `callTool` with `saveTo` answers (`ResultFile.SavedResult`).
 *
 * @since 0.1.0
 * @category models
 */
export type SavedResult = ResultFile.SavedResult

/**
 * The options of a paginated list.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListOptions extends Caller.ListOptions<Duration.DurationInput> {}

/**
 * What the params builder of an operation gets besides its arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type ParamsContext = Caller.ParamsContext

/**
 * The protocol's own schema of a result (the SDK's), whose output is the result type `A`: the owner checks a server's
 * result against it, never against what the server declared about itself (C25).
 *
 * @since 0.1.0
 * @category models
 */
export type ResultSchema<A> = Mcp.StandardSchemaV1<unknown, A>

/**
 * One request operation: `@mcp-worker/caller`'s entry (its method, arity, params builder and checks, whose answers are
 * the caller's plain `Checked`), with a span and the result's schema. `Args` are its positional arguments after the
 * worker id, `Options` its last argument, `A` its raw MCP result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Operation<
  Args extends ReadonlyArray<unknown>,
  Options extends RequestOptions,
  A
> extends Caller.Operation<Args, Options> {
  /** The MCP method sent. */
  readonly method: Method
  /** The span name, `McpWorkers.<name>`. */
  readonly span: string
  /** Span attributes read off the arguments (names only, never values that may be secret). */
  readonly attributes?: ((args: Args) => Record<string, unknown>) | undefined
  /** The protocol's schema of the result, whose output is the result type `A`. */
  readonly result: ResultSchema<A>
}

/**
 * Any operation of the table.
 *
 * @since 0.1.0
 * @category models
 */
export type Any = Operation<any, any, any>

/**
 * The function an operation becomes on a surface: the worker id, its arguments, then its options (`Extra` adds
 * what a surface offers beyond the core options, such as an `AbortSignal`).
 *
 * @since 0.1.0
 * @category models
 */
export type Fn<O, Extra = {}> =
  O extends Operation<infer Args, infer Options, infer A>
    ? Options extends CallToolOptions
      ? ((
          id: string,
          ...rest: [...Args, options: Options & Extra & { readonly saveTo: string }]
        ) => Effect.Effect<SavedResult, RequestError>) &
          ((id: string, ...rest: [...Args, options?: Options & Extra]) => Effect.Effect<A, RequestError>)
      : (id: string, ...rest: [...Args, options?: Options & Extra]) => Effect.Effect<A, RequestError>
    : never

/**
 * The request methods of a surface, derived from a table.
 *
 * @since 0.1.0
 * @category models
 */
export type Service<T extends { readonly [K in keyof T]: Any }, Extra = {}> = {
  readonly [K in keyof T]: Fn<T[K], Extra>
}

/**
 * Every request operation, by its name on `McpWorkers`: its positional arguments, its options and its raw MCP result.
 * The task operations are `Tasks.Requests`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Requests extends Tasks.Requests {
  /** `tools/list`: one page of the server's tools. */
  readonly listTools: Operation<Caller.ArgsOf<"listTools">, ListOptions, Mcp.ListToolsResult>
  /** `tools/call`: the server's raw result, `isError` included (a business result, C14). */
  readonly callTool: Operation<Caller.ArgsOf<"callTool">, CallToolOptions, Mcp.CallToolResult>
  /** `resources/list`: one page of the server's resources. */
  readonly listResources: Operation<Caller.ArgsOf<"listResources">, ListOptions, Mcp.ListResourcesResult>
  /** `resources/templates/list`: one page of the server's resource templates. */
  readonly listResourceTemplates: Operation<
    Caller.ArgsOf<"listResourceTemplates">,
    ListOptions,
    Mcp.ListResourceTemplatesResult
  >
  /** `resources/read`: the contents of one resource. */
  readonly readResource: Operation<Caller.ArgsOf<"readResource">, RequestOptions, Mcp.ReadResourceResult>
  /** `resources/subscribe`: ask the server to announce updates of one resource. */
  readonly subscribeResource: Operation<Caller.ArgsOf<"subscribeResource">, RequestOptions, Mcp.EmptyResult>
  /** `resources/unsubscribe`. */
  readonly unsubscribeResource: Operation<Caller.ArgsOf<"unsubscribeResource">, RequestOptions, Mcp.EmptyResult>
  /** `prompts/list`: one page of the server's prompts. */
  readonly listPrompts: Operation<Caller.ArgsOf<"listPrompts">, ListOptions, Mcp.ListPromptsResult>
  /** `prompts/get`: one prompt, its arguments filled in (string values, as the protocol has them). */
  readonly getPrompt: Operation<Caller.ArgsOf<"getPrompt">, RequestOptions, Mcp.GetPromptResult>
  /**
   * `completion/complete`: completions of one argument of a prompt or resource template. `params` is the request's
   * params as the protocol has them: `{ ref, argument: { name, value }, context? }`.
   */
  readonly complete: Operation<Caller.ArgsOf<"complete">, RequestOptions, Mcp.CompleteResult>
  /** `ping`: the server answers with an empty result. */
  readonly ping: Operation<Caller.ArgsOf<"ping">, RequestOptions, Mcp.EmptyResult>
}

/**
 * Every request operation: `@mcp-worker/caller`'s entry with its span and the protocol's schema of its result.
 *
 * @since 0.1.0
 * @category operations
 */
export const requests: Requests = {
  listTools: fromCaller("listTools", Mcp.specTypeSchemas.ListToolsResult),
  callTool: fromCaller("callTool", Mcp.specTypeSchemas.CallToolResult, ([name]) => ({ tool: name })),
  listResources: fromCaller("listResources", Mcp.specTypeSchemas.ListResourcesResult),
  listResourceTemplates: fromCaller("listResourceTemplates", Mcp.specTypeSchemas.ListResourceTemplatesResult),
  readResource: fromCaller("readResource", Mcp.specTypeSchemas.ReadResourceResult),
  subscribeResource: fromCaller("subscribeResource", Mcp.specTypeSchemas.EmptyResult),
  unsubscribeResource: fromCaller("unsubscribeResource", Mcp.specTypeSchemas.EmptyResult),
  listPrompts: fromCaller("listPrompts", Mcp.specTypeSchemas.ListPromptsResult),
  getPrompt: fromCaller("getPrompt", Mcp.specTypeSchemas.GetPromptResult, ([name]) => ({ prompt: name })),
  complete: fromCaller("complete", Mcp.specTypeSchemas.CompleteResult),
  ping: fromCaller("ping", Mcp.specTypeSchemas.EmptyResult),
  startTask: fromCaller("startTask", Mcp.specTypeSchemas.CreateTaskResult, ([name]) => ({ tool: name })),
  getTask: fromCaller("getTask", Mcp.specTypeSchemas.GetTaskResult),
  taskResult: fromCaller("taskResult", Mcp.specTypeSchemas.CallToolResult),
  cancelTask: fromCaller("cancelTask", Mcp.specTypeSchemas.CancelTaskResult),
  listTasks: fromCaller("listTasks", Mcp.specTypeSchemas.ListTasksResult)
}

/**
 * The request methods of a surface, built from one function that runs any operation: it gets the operation, the
 * worker id, the positional arguments and the options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const derive = <Extra = {}>(
  run: (
    operation: Any,
    id: string,
    args: ReadonlyArray<unknown>,
    options: (RequestOptions & Extra) | undefined
  ) => Effect.Effect<unknown, RequestError>
): Service<Requests, Extra> =>
  Object.fromEntries(
    Object.entries(requests).map(([name, operation]) => [name, positional(operation, run)])
  ) as unknown as Service<Requests, Extra>

// The surface function of one operation: fixed parameters for its arity (no rest array to slice on each call).
const positional = <Options>(
  operation: Any,
  run: (operation: Any, id: string, args: ReadonlyArray<unknown>, options: Options | undefined) => unknown
) => {
  switch (operation.arity) {
    case 0:
      return (id: string, options?: Options) => run(operation, id, [], options)
    case 1:
      return (id: string, a: unknown, options?: Options) => run(operation, id, [a], options)
    default:
      return (id: string, a: unknown, b: unknown, options?: Options) => run(operation, id, [a, b], options)
  }
}
